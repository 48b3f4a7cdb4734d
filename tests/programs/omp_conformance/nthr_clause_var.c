/* nthr_clause_var: num_threads from a variable, in a loop. */
#include "conf.h"
int main(void) {
  int teams[6] = {0};
  for (int k = 1; k <= 4; ++k) {
#pragma omp parallel num_threads(k)
#pragma omp single
    teams[k - 1] = omp_get_num_threads();
  }
  say_each("teams", teams, 4);
  return 0;
}
