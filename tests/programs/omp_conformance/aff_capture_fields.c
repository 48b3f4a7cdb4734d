/* aff_capture_fields: omp_capture_affinity with fields that do not depend on
   the machine (level, thread, team size, ancestor). */
#include "conf.h"
int main(void) {
  char out[MAXT][128];
  int team = 0;
#pragma omp parallel num_threads(3)
  {
    int t = omp_get_thread_num();
    omp_capture_affinity(out[t], sizeof out[t], "L=%L n=%n N=%N a=%a");
#pragma omp single
    team = omp_get_num_threads();
  }
  for (int t = 0; t < team; ++t) say_s("capture", out[t]);
  return 0;
}
