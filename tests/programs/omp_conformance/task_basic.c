/* task_basic: tasks created by one thread, results summed after taskwait. */
#include "conf.h"
int main(void) {
  int r[16] = {0};
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < 16; ++i) {
#pragma omp task firstprivate(i)
      r[i] = i * i;
    }
#pragma omp taskwait
  }
  say_each("squares", r, 16);
  return 0;
}
