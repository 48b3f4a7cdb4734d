/* task_untied: untied tasks with taskyield. */
#include "conf.h"
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < 8; ++i) {
#pragma omp task untied shared(n)
      {
#pragma omp taskyield
#pragma omp atomic
        n++;
      }
    }
  }
  say("n", n);
  return 0;
}
