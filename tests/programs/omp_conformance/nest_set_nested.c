/* nest_set_nested: the deprecated omp_set_nested(1) still enables nesting. */
#include "conf.h"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
int main(void) {
  int inner[MAXT] = {0};
  omp_set_nested(1);
  say("nested", omp_get_nested());
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel num_threads(2)
#pragma omp single
    inner[t] = omp_get_num_threads();
  }
  say_each("inner", inner, 2);
  return 0;
}
