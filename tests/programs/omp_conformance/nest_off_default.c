/* nest_off_default: without enabling nesting, inner regions are serialized. */
#include "conf.h"
int main(void) {
  int inner[MAXT] = {0};
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel num_threads(2)
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("inner", inner, 2);
  say("max_active_levels_is_1", omp_get_max_active_levels() == 1);
  return 0;
}
