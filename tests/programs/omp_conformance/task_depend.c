/* task_depend: in/out dependences order a chain. */
#include "conf.h"
int main(void) {
  int x = 1, log[4] = {0}, k = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(out : x) shared(x, log, k)
    {
      x *= 3;
      log[k++] = x;
    }
#pragma omp task depend(inout : x) shared(x, log, k)
    {
      x += 4;
      log[k++] = x;
    }
#pragma omp task depend(in : x) shared(x, log, k)
    log[k++] = x * 10;
  }
  say_each("log", log, 3);
  return 0;
}
