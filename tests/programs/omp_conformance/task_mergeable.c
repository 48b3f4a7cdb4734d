/* task_mergeable: mergeable tasks share results right. */
#include "conf.h"
int main(void) {
  int v = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task mergeable shared(v)
    v = 42;
#pragma omp taskwait
  }
  say("v", v);
  return 0;
}
