/* misc_exit_code: the program's exit status is its own. */
#include "conf.h"
int main(void) {
  int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  say("team", team);
  fflush(stdout);
  return 7;
}
