/* dyn_off_exact: dynamic off, teams are exactly the clause. */
#include "conf.h"
int main(void) {
  int team = 0;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(4)
#pragma omp single
  team = omp_get_num_threads();
  say("team", team);
  return 0;
}
