/* icv_schedule_env: OMP_SCHEDULE=static,4 is the run-sched ICV; a runtime loop sums right. */
// env: OMP_SCHEDULE=static,4
#include "conf.h"
int main(void) {
  omp_sched_t k;
  int c;
  long sum = 0;
  omp_get_schedule(&k, &c);
  say("kind_static", SAME(k & ~omp_sched_monotonic, omp_sched_static));
  say("chunk", c);
#pragma omp parallel for schedule(runtime) reduction(+ : sum)
  for (int i = 0; i < 1000; ++i) sum += i;
  say("sum", sum);
  return 0;
}
