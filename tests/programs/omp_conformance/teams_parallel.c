/* teams_parallel: a parallel region inside host teams. */
#include "conf.h"
int main(void) {
  int inner[8] = {0};
#pragma omp teams num_teams(2) thread_limit(2)
  {
    int t = omp_get_team_num();
#pragma omp parallel num_threads(2)
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("inner", inner, 2);
  return 0;
}
