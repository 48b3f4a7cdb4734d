/* ws_barrier_phases: barriers separate phases. */
#include "conf.h"
int main(void) {
  int a[2] = {0}, b[2] = {0};
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    a[t] = t + 1;
#pragma omp barrier
    b[t] = a[0] + a[1];
  }
  say_each("b", b, 2);
  return 0;
}
