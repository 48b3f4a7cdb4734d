/* bind_places_threads: OMP_PLACES=threads: number and size of places. */
// env: OMP_PLACES=threads OMP_PROC_BIND=true
#include "conf.h"
int main(void) {
  int n = omp_get_num_places();
  say("num_places", n);
  for (int i = 0; i < n && i < 8; ++i) {
    char k[32];
    snprintf(k, sizeof k, "place%d_procs", i);
    say(k, omp_get_place_num_procs(i));
  }
  return 0;
}
