/* icv_set_after_region: a value set after a first region applies to the next. */
#include "conf.h"
int main(void) {
  int a = 0, b = 0, m1 = 0;
#pragma omp parallel
#pragma omp single
  a = omp_get_num_threads();
  omp_set_num_threads(3);
#pragma omp parallel
#pragma omp single
  {
    b = omp_get_num_threads();
    m1 = omp_get_max_threads();
  }
  say("first_is_default", SAME(a, a));
  say("n.second", b);
  say("n.inside_max", m1);
  return 0;
}
