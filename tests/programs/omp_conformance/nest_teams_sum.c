/* nest_teams_sum: work in nested teams sums right. */
#include "conf.h"
int main(void) {
  long sum = 0;
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
#pragma omp parallel for num_threads(2) reduction(+ : sum)
    for (int i = 0; i < 100; ++i) sum += i;
  }
  say("sum", sum);
  return 0;
}
