/* icv_set_get: omp_set_num_threads(3) is what omp_get_max_threads() reports. */
#include "conf.h"
int main(void) {
  omp_set_num_threads(3);
  say("n.max", omp_get_max_threads());
  int team = 0;
#pragma omp parallel
#pragma omp single
  team = omp_get_num_threads();
  say("n.team", team);
  return 0;
}
