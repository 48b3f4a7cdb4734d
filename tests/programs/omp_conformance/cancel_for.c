/* cancel_for: cancel a worksharing loop once a value is found. */
// env: OMP_CANCELLATION=true
#include "conf.h"
int main(void) {
  int found = -1;
#pragma omp parallel num_threads(2)
#pragma omp for schedule(static, 1)
  for (int i = 0; i < 1000; ++i) {
    if (i == 37) {
#pragma omp atomic write
      found = i;
#pragma omp cancel for
    }
#pragma omp cancellation point for
  }
  say("found", found);
  return 0;
}
