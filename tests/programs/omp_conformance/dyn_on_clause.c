/* dyn_on_clause: dynamic on, a team never exceeds its clause. */
#include "conf.h"
int main(void) {
  int team = 0;
  omp_set_dynamic(1);
#pragma omp parallel num_threads(3)
#pragma omp single
  team = omp_get_num_threads();
  say("team_in_1_3", team >= 1 && team <= 3);
  say("dynamic", omp_get_dynamic());
  return 0;
}
