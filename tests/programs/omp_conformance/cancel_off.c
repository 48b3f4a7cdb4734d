/* cancel_off: without OMP_CANCELLATION, cancel is a no-op: every iteration runs. */
#include "conf.h"
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(2)
#pragma omp for reduction(+ : n)
  for (int i = 0; i < 100; ++i) {
    n++;
    if (i == 5) {
#pragma omp cancel for
    }
  }
  say("iterations", n);
  return 0;
}
