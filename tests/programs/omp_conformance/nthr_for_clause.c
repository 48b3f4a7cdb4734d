/* nthr_for_clause: parallel for num_threads(3), who ran what (static). */
#include "conf.h"
int main(void) {
  int owner[12];
#pragma omp parallel for num_threads(3) schedule(static)
  for (int i = 0; i < 12; ++i) owner[i] = omp_get_thread_num();
  say_each("owner", owner, 12);
  return 0;
}
