/* nest_max_levels_inner_set: max-active-levels set inside a region. */
#include "conf.h"
int main(void) {
  int v[MAXT] = {0};
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    omp_set_max_active_levels(t + 1);
    v[t] = omp_get_max_active_levels();
  }
  say("outside", omp_get_max_active_levels());
  say("inside_is_set", v[0] >= 1 && v[1] >= 1);
  return 0;
}
