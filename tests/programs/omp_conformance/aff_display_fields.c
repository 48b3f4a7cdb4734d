/* aff_display_fields: omp_display_affinity with a machine-free format,
   printed from the master only. */
#include "conf.h"
int main(void) {
  omp_set_affinity_format("level=%L team=%N");
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    {
      fflush(stdout);
      omp_display_affinity(NULL);
      fflush(stdout);
    }
  }
  say("done", 1);
  return 0;
}
