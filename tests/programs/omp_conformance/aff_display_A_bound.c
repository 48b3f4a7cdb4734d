/* aff_display_A_bound: the default format (it contains the CPU set) with the
   user's binding: what each thread prints is the runtime's binding. */
// env: OMP_PROC_BIND=true OMP_PLACES=cores
#include "conf.h"
int main(void) {
  char out[MAXT][256];
  int team = 0;
#pragma omp parallel num_threads(2)
  {
    omp_capture_affinity(out[omp_get_thread_num()], sizeof out[0], "%n:%A");
#pragma omp single
    team = omp_get_num_threads();
  }
  for (int t = 0; t < team; ++t) say_s("cap", out[t]);
  return 0;
}
