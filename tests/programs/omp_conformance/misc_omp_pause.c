/* misc_omp_pause: omp_pause_resource_all, then regions still work. */
#include "conf.h"
int main(void) {
  int a = 0, b = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  a = omp_get_num_threads();
  (void)omp_pause_resource_all(omp_pause_soft);
#pragma omp parallel num_threads(2)
#pragma omp single
  b = omp_get_num_threads();
  say("a", a);
  say("b", b);
  return 0;
}
