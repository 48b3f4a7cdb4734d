/* dyn_in_region: dynamic set inside a region is that thread's own. */
#include "conf.h"
int main(void) {
  int d[MAXT] = {0};
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    omp_set_dynamic(t);
    d[t] = omp_get_dynamic();
  }
  say_each("dynamic", d, 2);
  say("outside", omp_get_dynamic());
  return 0;
}
