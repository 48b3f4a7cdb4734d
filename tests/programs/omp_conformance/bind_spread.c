/* bind_spread: OMP_PROC_BIND=spread: partitions and places. */
// env: OMP_PROC_BIND=spread OMP_PLACES=cores
#include "conf.h"
int main(void) {
  int part[MAXT], place[MAXT], team = 0;
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    part[t] = omp_get_partition_num_places();
    place[t] = omp_get_place_num();
#pragma omp single
    team = omp_get_num_threads();
  }
  say("proc_bind", omp_get_proc_bind());
  say_each("partition", part, team);
  say_each("place", place, team);
  return 0;
}
