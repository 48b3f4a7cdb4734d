/* task_procs_first: omp_get_num_procs() before the first region (item 18). */
#include "conf.h"
int main(void) {
  cpu_set_t s;
  sched_getaffinity(0, sizeof s, &s);
  const int procs = omp_get_num_procs();
  int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  say("procs_is_affinity", SAME(procs, CPU_COUNT(&s)));
  say("team", team);
  return 0;
}
