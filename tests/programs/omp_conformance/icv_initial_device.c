/* icv_initial_device: host execution facts. */
#include "conf.h"
int main(void) {
  say("is_initial_device", omp_is_initial_device());
  say("wtick_positive", omp_get_wtick() > 0.0);
  double t0 = omp_get_wtime();
  say("wtime_monotonic", omp_get_wtime() >= t0);
  return 0;
}
