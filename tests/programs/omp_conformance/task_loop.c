/* task_loop: taskloop with grainsize and a reduction. */
#include "conf.h"
int main(void) {
  long sum = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskloop grainsize(10) reduction(+ : sum)
  for (int i = 1; i <= 200; ++i) sum += i;
  say("sum", sum);
  return 0;
}
