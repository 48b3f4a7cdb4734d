/* misc_gomp_cpu_affinity: GOMP_CPU_AFFINITY=0 (libgomp's own variable): the
   user's choice; regions run and count right. */
// env: GOMP_CPU_AFFINITY=0
#include "conf.h"
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : n)
  n = 1;
  say("n", n);
  return 0;
}
