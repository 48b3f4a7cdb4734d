/* ws_simd: parallel for simd. */
#include "conf.h"
int main(void) {
  float x[256];
  double s = 0;
#pragma omp parallel for simd reduction(+ : s)
  for (int i = 0; i < 256; ++i) {
    x[i] = (float)i * 0.5f;
    s += x[i];
  }
  say("sum", (long)s);
  return 0;
}
