/* task_reduction: task_reduction / in_reduction. */
#include "conf.h"
int main(void) {
  long s = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : s)
    {
      for (int i = 0; i < 10; ++i) {
#pragma omp task in_reduction(+ : s) firstprivate(i)
        s += i;
      }
    }
  }
  say("sum", s);
  return 0;
}
