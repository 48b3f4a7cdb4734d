/* ws_runtime_set: schedule(runtime) after omp_set_schedule(dynamic, 2). */
#include "conf.h"
int main(void) {
  long s = 0;
  omp_set_schedule(omp_sched_dynamic, 2);
#pragma omp parallel for schedule(runtime) reduction(+ : s)
  for (int i = 0; i < 100; ++i) s += i;
  say("sum", s);
  return 0;
}
