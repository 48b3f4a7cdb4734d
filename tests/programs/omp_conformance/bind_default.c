/* bind_default: with no binding variable, proc-bind is false and the whole
   set is one place (item 17: omp_get_num_places() stays 1). */
#include "conf.h"
int main(void) {
  int pb = -1;
  say("proc_bind", omp_get_proc_bind());
#pragma omp parallel num_threads(2)
#pragma omp single
  pb = omp_get_proc_bind();
  say("proc_bind_inside", pb);
  say("num_places", omp_get_num_places());
  return 0;
}
