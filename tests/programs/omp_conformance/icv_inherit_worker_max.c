/* icv_inherit_worker_max: workers inherit the master's nthreads ICV (item 16):
   each thread of a team of 3 reports omp_get_max_threads() == 3. */
#include "conf.h"
int main(void) {
  int max[MAXT] = {0};
  omp_set_num_threads(3);
#pragma omp parallel num_threads(3)
  max[omp_get_thread_num()] = omp_get_max_threads();
  say_each("n.max_per_thread", max, 3);
  return 0;
}
