/* ws_ordered: ordered prints in iteration order. */
#include "conf.h"
int main(void) {
  int seq[10], k = 0;
#pragma omp parallel for ordered schedule(dynamic) num_threads(2)
  for (int i = 0; i < 10; ++i) {
#pragma omp ordered
    seq[k++] = i;
  }
  say_each("seq", seq, 10);
  return 0;
}
