/* icv_procs_vs_max: omp_get_num_procs() against the process's affinity. */
#include "conf.h"
int main(void) {
  cpu_set_t s;
  sched_getaffinity(0, sizeof s, &s);
  say("procs_is_affinity", SAME(omp_get_num_procs(), CPU_COUNT(&s)));
  return 0;
}
