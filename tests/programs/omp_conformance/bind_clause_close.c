/* bind_clause_close: a proc_bind(close) clause with places set. */
// env: OMP_PLACES=cores
#include "conf.h"
int main(void) {
  int place[MAXT], team = 0;
#pragma omp parallel num_threads(2) proc_bind(close)
  {
    place[omp_get_thread_num()] = omp_get_place_num();
#pragma omp single
    team = omp_get_num_threads();
  }
  say_each("place", place, team);
  return 0;
}
