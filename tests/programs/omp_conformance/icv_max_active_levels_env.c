/* icv_max_active_levels_env: OMP_MAX_ACTIVE_LEVELS=1 serializes nested regions. */
// env: OMP_MAX_ACTIVE_LEVELS=1
#include "conf.h"
int main(void) {
  int inner[MAXT] = {0};
  say("max_active_levels", omp_get_max_active_levels());
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel num_threads(2)
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("inner", inner, 2);
  return 0;
}
