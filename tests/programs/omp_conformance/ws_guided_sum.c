/* ws_guided_sum: schedule(guided). */
#include "conf.h"
int main(void) {
  long s = 0;
#pragma omp parallel for schedule(guided) reduction(+ : s)
  for (int i = 0; i < 777; ++i) s += i;
  say("sum", s);
  return 0;
}
