/* aff_capture_long_names: the long field names. */
#include "conf.h"
int main(void) {
  char out[MAXT][160];
#pragma omp parallel num_threads(2)
  omp_capture_affinity(out[omp_get_thread_num()], sizeof out[0],
                       "{nesting_level}/{thread_num}/{num_threads}");
  say_s("t0", out[0]);
  say_s("t1", out[1]);
  return 0;
}
