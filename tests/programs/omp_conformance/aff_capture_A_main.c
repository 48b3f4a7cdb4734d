/* aff_capture_A_main: the %A field (item 17: must not abort) on the main
   thread, which keeps the process's set. */
#include "conf.h"
int main(void) {
  char out[256], self[256];
  omp_capture_affinity(out, sizeof out, "%A");
  cpus_of_self(self, sizeof self);
  say("nonempty", out[0] != '\0');
#pragma omp parallel num_threads(2)
  {
    volatile int x = 0;
    x++;
  }
  omp_capture_affinity(out, sizeof out, "%A");
  say("after_region_nonempty", out[0] != '\0');
  return 0;
}
