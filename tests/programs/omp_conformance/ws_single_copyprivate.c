/* ws_single_copyprivate: copyprivate broadcasts a single's value. */
#include "conf.h"
int main(void) {
  int got[MAXT] = {0}, team = 0;
#pragma omp parallel num_threads(3)
  {
    int v = 0;
#pragma omp single copyprivate(v)
    v = 17;
    got[omp_get_thread_num()] = v;
#pragma omp single
    team = omp_get_num_threads();
  }
  say_each("got", got, team);
  return 0;
}
