/* misc_reduction_ops: max, min, *, &&, |. */
#include "conf.h"
int main(void) {
  int mx = -1, mn = 1000, all = 1, bits = 0;
  long prod = 1;
#pragma omp parallel for reduction(max : mx) reduction(min : mn) reduction(* : prod) \
    reduction(&& : all) reduction(| : bits)
  for (int i = 1; i <= 10; ++i) {
    mx = i > mx ? i : mx;
    mn = i < mn ? i : mn;
    prod *= (i % 3) + 1;
    all = all && i > 0;
    bits |= 1 << (i % 5);
  }
  say("max", mx);
  say("min", mn);
  say("prod", prod);
  say("all", all);
  say("bits", bits);
  return 0;
}
