/* bind_close_cpus: OMP_PROC_BIND=close: threads run where their place says. */
// env: OMP_PROC_BIND=close OMP_PLACES=cores
#include "conf.h"
int main(void) {
  char cpus[MAXT][256];
  int team = 0;
#pragma omp parallel num_threads(2)
  {
    cpus_of_self(cpus[omp_get_thread_num()], sizeof cpus[0]);
#pragma omp single
    team = omp_get_num_threads();
  }
  for (int t = 0; t < team; ++t) {
    char k[32];
    snprintf(k, sizeof k, "cpus%d", t);
    say_s(k, cpus[t]);
  }
  return 0;
}
