/* bind_partition_ids: partition place numbers in a spread team. */
// env: OMP_PLACES=cores OMP_PROC_BIND=spread
#include "conf.h"
int main(void) {
  int first[MAXT] = {0}, team = 0;
#pragma omp parallel num_threads(2)
  {
    int ids[64] = {0};
    omp_get_partition_place_nums(ids);
    first[omp_get_thread_num()] = ids[0];
#pragma omp single
    team = omp_get_num_threads();
  }
  say_each("partition_first", first, team);
  return 0;
}
