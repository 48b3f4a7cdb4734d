/* nthr_if_false: if(0) beats num_threads(4). */
#include "conf.h"
int main(void) {
  int team = 0, inp = -1;
  int zero = 0;
#pragma omp parallel num_threads(4) if (zero)
  {
    team = omp_get_num_threads();
    inp = omp_in_parallel();
  }
  say("team", team);
  say("in_parallel", inp);
  return 0;
}
