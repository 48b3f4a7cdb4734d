/* cancel_taskgroup: cancel the remaining tasks of a taskgroup. */
// env: OMP_CANCELLATION=true
#include "conf.h"
int main(void) {
  int hit = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp taskgroup
    {
      for (int i = 0; i < 50; ++i) {
#pragma omp task firstprivate(i) shared(hit)
        {
          if (i == 3) {
#pragma omp atomic write
            hit = 1;
#pragma omp cancel taskgroup
          }
        }
      }
    }
  }
  say("hit", hit);
  say("cancellation", omp_get_cancellation());
  return 0;
}
