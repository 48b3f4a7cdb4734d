/* aff_env_display: OMP_DISPLAY_AFFINITY=true with a machine-free format
   (item 17: the runtime prints, and does not abort). */
// env: OMP_DISPLAY_AFFINITY=true OMP_AFFINITY_FORMAT=L%L_N%N
#include "conf.h"
int main(void) {
  int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  fflush(stdout);
  say("team", team);
  return 0;
}
