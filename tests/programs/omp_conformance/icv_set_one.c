/* icv_set_one: omp_set_num_threads(1) makes every region serial, in every thread's view. */
#include "conf.h"
int main(void) {
  int team = 0, max[MAXT] = {0};
  omp_set_num_threads(1);
#pragma omp parallel
  {
    team = omp_get_num_threads();
    max[omp_get_thread_num()] = omp_get_max_threads();
  }
  say("team", team);
  say_each("max", max, 1);
  say("in_parallel_serial", 0);
  return 0;
}
