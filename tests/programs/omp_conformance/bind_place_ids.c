/* bind_place_ids: processor ids of each place. */
// env: OMP_PLACES=cores OMP_PROC_BIND=close
#include "conf.h"
int main(void) {
  int n = omp_get_num_places();
  say("num_places", n);
  for (int i = 0; i < n && i < 8; ++i) {
    int ids[64] = {0};
    int k = omp_get_place_num_procs(i);
    if (k > 64) k = 64;
    omp_get_place_proc_ids(i, ids);
    char key[32];
    snprintf(key, sizeof key, "place%d_ids", i);
    say_each(key, ids, k);
  }
  return 0;
}
