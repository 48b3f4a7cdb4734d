/* nest_default_inner: nested teams without clauses follow the inherited ICV
   of the master, which set 2 (item 16). */
#include "conf.h"
int main(void) {
  int inner[MAXT] = {0};
  omp_set_max_active_levels(2);
  omp_set_num_threads(2);
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp parallel
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("n.inner", inner, 2);
  return 0;
}
