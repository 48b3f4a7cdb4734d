/* nthr_thread_limit_api: omp_get_thread_limit() is large by default. */
#include "conf.h"
int main(void) {
  say("limit_ge_64", omp_get_thread_limit() >= 64);
  return 0;
}
