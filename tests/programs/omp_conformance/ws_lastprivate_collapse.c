/* ws_lastprivate_collapse: collapse(2) with lastprivate. */
#include "conf.h"
int main(void) {
  int last = -1;
  long s = 0;
#pragma omp parallel for collapse(2) lastprivate(last) reduction(+ : s)
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j) {
      last = i * 10 + j;
      s += last;
    }
  say("last", last);
  say("sum", s);
  return 0;
}
