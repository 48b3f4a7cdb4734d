/* task_priority: tasks with priorities all run. */
// env: OMP_MAX_TASK_PRIORITY=4
#include "conf.h"
int main(void) {
  int done[5] = {0};
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < 5; ++i) {
#pragma omp task priority(i) firstprivate(i) shared(done)
      done[i] = 1;
    }
  }
  say_each("done", done, 5);
  return 0;
}
