/* nthr_clause_three: num_threads(3) is the programmer's, left alone. */
#include "conf.h"
int main(void) {
  int ids[MAXT] = {0}, team = 0;
#pragma omp parallel num_threads(3)
  {
    ids[omp_get_thread_num()] = omp_get_thread_num() + 1;
#pragma omp single
    team = omp_get_num_threads();
  }
  say("team", team);
  say_each("ids", ids, team);
  return 0;
}
