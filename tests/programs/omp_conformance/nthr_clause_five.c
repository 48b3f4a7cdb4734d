/* nthr_clause_five: more threads than CPUs, by request. */
#include "conf.h"
int main(void) {
  int team = 0, n = 0;
#pragma omp parallel num_threads(5)
  {
#pragma omp atomic
    n++;
#pragma omp single
    team = omp_get_num_threads();
  }
  say("team", team);
  say("ran", n);
  return 0;
}
