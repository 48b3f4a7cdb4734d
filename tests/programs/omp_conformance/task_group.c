/* task_group: taskgroup waits for descendants too. */
#include "conf.h"
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp taskgroup
    {
      for (int i = 0; i < 4; ++i) {
#pragma omp task shared(n)
        {
#pragma omp task shared(n)
          {
#pragma omp atomic
            n++;
          }
#pragma omp atomic
          n++;
        }
      }
    }
    say("after_group", n);
  }
  return 0;
}
