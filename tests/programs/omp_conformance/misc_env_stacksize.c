/* misc_env_stacksize: OMP_STACKSIZE lets a worker use a 6 MiB local array
   (more than libomp's default worker stack). */
// env: OMP_STACKSIZE=16M
#include "conf.h"
int main(void) {
  long s[MAXT] = {0};
#pragma omp parallel num_threads(2)
  {
    volatile char big[6 << 20];
    big[0] = 1;
    big[sizeof big - 1] = 2;
    s[omp_get_thread_num()] = big[0] + big[sizeof big - 1];
  }
  say("t0", s[0]);
  say("t1", s[1]);
  return 0;
}
