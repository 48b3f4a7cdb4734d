/* ws_static: schedule(static) distributes contiguous blocks in order. */
#include "conf.h"
int main(void) {
  int owner[8];
#pragma omp parallel for num_threads(2) schedule(static)
  for (int i = 0; i < 8; ++i) owner[i] = omp_get_thread_num();
  say_each("owner", owner, 8);
  return 0;
}
