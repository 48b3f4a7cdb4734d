/* task_before_region: a task outside any parallel region initialises the
   runtime before the first region (item 18). */
#include "conf.h"
int main(void) {
  int a = 0, team = 0;
#pragma omp task shared(a)
  a = 5;
#pragma omp taskwait
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  say("a", a);
  say("team", team);
  return 0;
}
