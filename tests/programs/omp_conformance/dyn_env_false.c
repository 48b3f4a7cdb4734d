/* dyn_env_false: OMP_DYNAMIC=false. */
// env: OMP_DYNAMIC=false
#include "conf.h"
int main(void) {
  int team = 0;
  say("dynamic", omp_get_dynamic());
#pragma omp parallel num_threads(3)
#pragma omp single
  team = omp_get_num_threads();
  say("team", team);
  return 0;
}
