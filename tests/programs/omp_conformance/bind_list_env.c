/* bind_list_env: OMP_PROC_BIND=spread,close: the nested binding. */
// env: OMP_PROC_BIND=spread,close OMP_MAX_ACTIVE_LEVELS=2
#include "conf.h"
int main(void) {
  int inner = -1;
  say("outer", omp_get_proc_bind());
#pragma omp parallel num_threads(1)
  inner = omp_get_proc_bind();
  say("inner", inner);
  return 0;
}
