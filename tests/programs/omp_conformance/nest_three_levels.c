/* nest_three_levels: levels and active levels three deep. */
#include "conf.h"
int main(void) {
  int lv[8] = {0}, al[8] = {0}, n = 0;
  omp_set_max_active_levels(3);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
  {
    int slot = omp_get_ancestor_thread_num(1) * 4 + omp_get_ancestor_thread_num(2) * 2 +
               omp_get_thread_num();
    lv[slot] = omp_get_level();
    al[slot] = omp_get_active_level();
#pragma omp atomic
    n++;
  }
  say_each("levels", lv, 8);
  say_each("active", al, 8);
  say("threads", n);
  return 0;
}
