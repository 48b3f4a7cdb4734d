/* nthr_clause_one: num_threads(1). */
#include "conf.h"
int main(void) {
  int team = 0;
#pragma omp parallel num_threads(1)
  team = omp_get_num_threads();
  say("team", team);
  return 0;
}
