/* icv_inherit_worker_region: a worker's first region after inheriting the
   master's ICV (item 16), with nesting off: serialized, team of 1, and the
   ICV seen inside is still the master's. */
#include "conf.h"
int main(void) {
  int team[MAXT] = {0}, max[MAXT] = {0};
  omp_set_max_active_levels(1);
  omp_set_num_threads(3);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel
    {
      team[t] = omp_get_num_threads();
      max[t] = omp_get_max_threads();
    }
  }
  say_each("inner_team", team, 2);
  say_each("n.inner_max", max, 2);
  return 0;
}
