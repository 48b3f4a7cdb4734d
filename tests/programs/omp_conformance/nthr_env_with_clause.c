/* nthr_env_with_clause: OMP_NUM_THREADS=3 and a num_threads(2) clause. */
// env: OMP_NUM_THREADS=3
#include "conf.h"
int main(void) {
  int a = 0, b = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  a = omp_get_num_threads();
#pragma omp parallel
#pragma omp single
  b = omp_get_num_threads();
  say("clause", a);
  say("n.env", b);
  return 0;
}
