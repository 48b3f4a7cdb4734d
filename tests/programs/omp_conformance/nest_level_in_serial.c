/* nest_level_in_serial: an if(0) region counts as a level, not as active. */
#include "conf.h"
int main(void) {
  int l = -1, a = -1, t = -1;
#pragma omp parallel if (0)
  {
    l = omp_get_level();
    a = omp_get_active_level();
    t = omp_get_num_threads();
  }
  say("level", l);
  say("active", a);
  say("team", t);
  return 0;
}
