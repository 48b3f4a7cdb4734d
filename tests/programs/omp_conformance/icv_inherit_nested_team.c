/* icv_inherit_nested_team: nested teams use the nthreads ICV inherited from
   the master's omp_set_num_threads(3) (item 16). */
#include "conf.h"
int main(void) {
  int inner[MAXT] = {0};
  omp_set_max_active_levels(2);
  omp_set_num_threads(3);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("n.inner_teams", inner, 2);
  return 0;
}
