/* ws_master_masked: master runs on thread 0 only. */
#include "conf.h"
int main(void) {
  int who = -1, n = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    {
      who = omp_get_thread_num();
      n++;
    }
  }
  say("who", who);
  say("times", n);
  return 0;
}
