/* nest_two_levels: 2 x 3 nested teams with clauses. */
#include "conf.h"
int main(void) {
  int inner[MAXT] = {0};
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel num_threads(3)
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("inner", inner, 2);
  return 0;
}
