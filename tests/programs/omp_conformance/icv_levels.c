/* icv_levels: level, active level, in_parallel outside and inside regions. */
#include "conf.h"
int main(void) {
  int lvl = -1, act = -1, inp = -1, lvl1 = -1, act1 = -1;
  say("level0", omp_get_level());
  say("active0", omp_get_active_level());
  say("in_parallel0", omp_in_parallel());
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    lvl = omp_get_level();
    act = omp_get_active_level();
    inp = omp_in_parallel();
  }
#pragma omp parallel num_threads(1)
  {
    lvl1 = omp_get_level();
    act1 = omp_get_active_level();
  }
  say("level1", lvl);
  say("active1", act);
  say("in_parallel1", inp);
  say("level_serial", lvl1);
  say("active_serial", act1);
  return 0;
}
