/* misc_kmp_affinity_none: KMP_AFFINITY=none (libomp's variable). */
// env: KMP_AFFINITY=none
#include "conf.h"
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : n)
  n = 1;
  say("n", n);
  say("num_places", omp_get_num_places());
  return 0;
}
