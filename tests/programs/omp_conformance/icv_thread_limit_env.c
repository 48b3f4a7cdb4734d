/* icv_thread_limit_env: OMP_THREAD_LIMIT=2 caps a num_threads(4) team. */
// env: OMP_THREAD_LIMIT=2
#include "conf.h"
int main(void) {
  int team = 0;
  say("thread_limit", omp_get_thread_limit());
#pragma omp parallel num_threads(4)
#pragma omp single
  team = omp_get_num_threads();
  say("team", team);
  return 0;
}
