/* ws_dynamic_sum: schedule(dynamic, 3) with a reduction. */
#include "conf.h"
int main(void) {
  long s = 0;
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : s)
  for (int i = 0; i < 1000; ++i) s += i % 7;
  say("sum", s);
  return 0;
}
