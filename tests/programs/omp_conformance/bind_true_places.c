/* bind_true_places: OMP_PROC_BIND=true with OMP_PLACES=cores: each thread's place. */
// env: OMP_PROC_BIND=true OMP_PLACES=cores
#include "conf.h"
int main(void) {
  int place[MAXT], team = 0;
#pragma omp parallel num_threads(2)
  {
    place[omp_get_thread_num()] = omp_get_place_num();
#pragma omp single
    team = omp_get_num_threads();
  }
  say("proc_bind", omp_get_proc_bind());
  say("num_places", omp_get_num_places());
  say_each("place", place, team);
  return 0;
}
