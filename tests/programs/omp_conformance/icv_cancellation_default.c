/* icv_cancellation_default: cancellation is off unless OMP_CANCELLATION is set. */
#include "conf.h"
int main(void) {
  say("cancellation", omp_get_cancellation());
  return 0;
}
