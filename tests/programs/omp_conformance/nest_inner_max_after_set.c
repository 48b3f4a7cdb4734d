/* nest_inner_max_after_set: a worker that sets its own ICV sees it; the
   others keep the inherited one. */
#include "conf.h"
int main(void) {
  int max[MAXT] = {0};
  omp_set_num_threads(4);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    if (t == 1) omp_set_num_threads(3);
#pragma omp barrier
    max[t] = omp_get_max_threads();
  }
  say_each("n.max", max, 2);
  return 0;
}
