/* icv_cancellation_env: OMP_CANCELLATION=true is read. */
// env: OMP_CANCELLATION=true
#include "conf.h"
int main(void) {
  say("cancellation", omp_get_cancellation());
  return 0;
}
