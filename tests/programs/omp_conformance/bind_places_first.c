/* bind_places_first: places queried before any region (item 18: the runtime
   initialises here; nothing may be printed about it later). */
#include "conf.h"
int main(void) {
  int n = omp_get_num_places(), team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  say("num_places", n);
  say("team", team);
  return 0;
}
