/* icv_max_active_levels: set and read back; the supported maximum is positive. */
#include "conf.h"
int main(void) {
  omp_set_max_active_levels(3);
  say("max_active_levels", omp_get_max_active_levels());
  omp_set_max_active_levels(1);
  say("max_active_levels_1", omp_get_max_active_levels());
  say("supported_ge_1", omp_get_supported_active_levels() >= 1);
  return 0;
}
