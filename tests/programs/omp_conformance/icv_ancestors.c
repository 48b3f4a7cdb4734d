/* icv_ancestors: ancestor thread numbers and team sizes at each level. */
#include "conf.h"
int main(void) {
  int anc[MAXT] = {0}, size1[MAXT] = {0}, size2[MAXT] = {0};
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
#pragma omp parallel num_threads(2)
    {
      int slot = omp_get_ancestor_thread_num(1) * 2 + omp_get_thread_num();
      anc[slot] = omp_get_ancestor_thread_num(1);
      size1[slot] = omp_get_team_size(1);
      size2[slot] = omp_get_team_size(2);
    }
  }
  say_each("ancestor1", anc, 4);
  say_each("size1", size1, 4);
  say_each("size2", size2, 4);
  say("ancestor_bad", omp_get_ancestor_thread_num(5));
  say("team_size_0", omp_get_team_size(0));
  return 0;
}
