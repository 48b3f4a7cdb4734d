/* icv_task_priority: OMP_MAX_TASK_PRIORITY=5 is read. */
// env: OMP_MAX_TASK_PRIORITY=5
#include "conf.h"
int main(void) {
  say("max_task_priority", omp_get_max_task_priority());
  return 0;
}
