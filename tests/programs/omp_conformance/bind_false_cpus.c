/* bind_false_cpus: OMP_PROC_BIND=false: the runtime binds nothing, and
   neither may anyone else (item 19): every thread keeps the process's set. */
// env: OMP_PROC_BIND=false
#include "conf.h"
int main(void) {
  char main_cpus[256], cpus[MAXT][256];
  int same[MAXT] = {0}, team = 0;
  cpus_of_self(main_cpus, sizeof main_cpus);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    cpus_of_self(cpus[t], sizeof cpus[t]);
#pragma omp single
    team = omp_get_num_threads();
  }
  for (int t = 0; t < team; ++t) same[t] = !strcmp(cpus[t], main_cpus);
  say_each("thread_has_process_set", same, team);
  say("proc_bind", omp_get_proc_bind());
  return 0;
}
