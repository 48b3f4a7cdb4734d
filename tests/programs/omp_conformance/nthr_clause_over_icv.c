/* nthr_clause_over_icv: the clause wins over omp_set_num_threads. */
#include "conf.h"
int main(void) {
  int a = 0, b = 0;
  omp_set_num_threads(4);
#pragma omp parallel num_threads(2)
#pragma omp single
  a = omp_get_num_threads();
#pragma omp parallel
#pragma omp single
  b = omp_get_num_threads();
  say("clause", a);
  say("n.icv", b);
  return 0;
}
