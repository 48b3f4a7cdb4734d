/* nthr_sections_clause: sections in a team of 2. */
#include "conf.h"
int main(void) {
  int done[3] = {0}, team = 0;
#pragma omp parallel sections num_threads(2)
  {
#pragma omp section
    {
      done[0] = 1;
      team = omp_get_num_threads();
    }
#pragma omp section
    done[1] = 2;
#pragma omp section
    done[2] = 3;
  }
  say_each("done", done, 3);
  say("team", team);
  return 0;
}
