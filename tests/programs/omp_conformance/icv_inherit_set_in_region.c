/* icv_inherit_set_in_region: a thread's omp_set_num_threads inside a region
   changes only its own data environment: its nested team. */
#include "conf.h"
int main(void) {
  int inner[MAXT] = {0};
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    omp_set_num_threads(t + 1);
#pragma omp parallel
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("inner_teams", inner, 2);
  say("n.after_max_is_default", SAME(omp_get_max_threads(), omp_get_max_threads()));
  return 0;
}
