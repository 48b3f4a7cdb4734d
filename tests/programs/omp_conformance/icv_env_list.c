/* icv_env_list: OMP_NUM_THREADS=3,2 gives 3 at the outer level and 2 inside. */
// env: OMP_NUM_THREADS=3,2 OMP_MAX_ACTIVE_LEVELS=2
#include "conf.h"
int main(void) {
  int outer = 0, inner[MAXT] = {0}, imax[MAXT] = {0};
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp single
    outer = omp_get_num_threads();
    imax[t] = omp_get_max_threads();
#pragma omp parallel
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say("n.outer", outer);
  say_each("n.inner_max", imax, outer);
  say_each("n.inner", inner, outer);
  return 0;
}
