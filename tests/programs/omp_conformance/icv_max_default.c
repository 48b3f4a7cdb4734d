/* icv_max_default: the default team size equals omp_get_max_threads(). */
#include "conf.h"
int main(void) {
  int team = 0;
  const int max = omp_get_max_threads();
#pragma omp parallel
#pragma omp single
  team = omp_get_num_threads();
  say("team_is_max", SAME(team, max));
  say("max_ge_1", max >= 1);
  return 0;
}
