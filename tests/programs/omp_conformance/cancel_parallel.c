/* cancel_parallel: cancel a parallel region (OMP_CANCELLATION=true). */
// env: OMP_CANCELLATION=true
#include "conf.h"
int main(void) {
  int reached = 0;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
    }
#pragma omp barrier
#pragma omp atomic
    reached++;
  }
  say("cancellation", omp_get_cancellation());
  say("reached_le_2", reached <= 2);
  return 0;
}
