/* ws_locks: simple and nested locks. */
#include "conf.h"
int main(void) {
  omp_lock_t l;
  omp_nest_lock_t nl;
  long n = 0, m = 0;
  omp_init_lock(&l);
  omp_init_nest_lock(&nl);
#pragma omp parallel num_threads(2)
  for (int i = 0; i < 500; ++i) {
    omp_set_lock(&l);
    n++;
    omp_unset_lock(&l);
    omp_set_nest_lock(&nl);
    omp_set_nest_lock(&nl);
    m++;
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl);
  }
  omp_destroy_lock(&l);
  omp_destroy_nest_lock(&nl);
  say("n", n);
  say("m", m);
  omp_lock_t l2;
  omp_init_lock(&l2);
  say("test_lock_free", omp_test_lock(&l2));
  omp_unset_lock(&l2);
  omp_destroy_lock(&l2);
  return 0;
}
