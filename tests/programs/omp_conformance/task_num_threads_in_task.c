/* task_num_threads_in_task: a region inside a task uses the task's ICVs. */
#include "conf.h"
int main(void) {
  int team = 0;
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task shared(team)
    {
      omp_set_num_threads(2);
#pragma omp parallel
#pragma omp single
      team = omp_get_num_threads();
    }
  }
  say("n.team", team);
  return 0;
}
