/* task_fib: recursive tasks. */
#include "conf.h"
static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) if (n > 12)
  a = fib(n - 1);
#pragma omp task shared(b) if (n > 12)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}
int main(void) {
  long f = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  f = fib(22);
  say("fib22", f);
  return 0;
}
