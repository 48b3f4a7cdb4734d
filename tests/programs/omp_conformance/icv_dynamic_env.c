/* icv_dynamic_env: OMP_DYNAMIC=true is read; teams never exceed the request. */
// env: OMP_DYNAMIC=true
#include "conf.h"
int main(void) {
  int team = 0;
  say("dynamic", omp_get_dynamic());
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  say("team_le_2", team <= 2 && team >= 1);
  return 0;
}
