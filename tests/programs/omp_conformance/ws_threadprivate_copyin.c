/* ws_threadprivate_copyin: threadprivate with copyin (teams of 2, dynamic off). */
#include "conf.h"
static int tp = 0;
#pragma omp threadprivate(tp)
int main(void) {
  int got[MAXT] = {0};
  omp_set_dynamic(0);
  tp = 9;
#pragma omp parallel num_threads(2) copyin(tp)
  got[omp_get_thread_num()] = tp;
  say_each("got", got, 2);
  return 0;
}
