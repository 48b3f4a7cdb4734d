/* icv_schedule: omp_set_schedule / omp_get_schedule round trip. */
#include "conf.h"
int main(void) {
  omp_sched_t k;
  int c;
  omp_set_schedule(omp_sched_dynamic, 7);
  omp_get_schedule(&k, &c);
  say("kind_dynamic", SAME(k & ~omp_sched_monotonic, omp_sched_dynamic));
  say("chunk", c);
  omp_set_schedule(omp_sched_guided, 3);
  omp_get_schedule(&k, &c);
  say("kind_guided", SAME(k & ~omp_sched_monotonic, omp_sched_guided));
  say("chunk2", c);
  return 0;
}
