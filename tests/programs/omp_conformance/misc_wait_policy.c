/* misc_wait_policy: OMP_WAIT_POLICY=passive changes nothing visible. */
// env: OMP_WAIT_POLICY=passive
#include "conf.h"
int main(void) {
  long s = 0;
  for (int r = 0; r < 5; ++r) {
#pragma omp parallel for reduction(+ : s) num_threads(2)
    for (int i = 0; i < 100; ++i) s += i;
  }
  say("sum", s);
  return 0;
}
