/* cancel_sections: cancel in sections. */
// env: OMP_CANCELLATION=true
#include "conf.h"
int main(void) {
  int a = 0;
#pragma omp parallel num_threads(2)
#pragma omp sections
  {
#pragma omp section
    {
      a = 1;
#pragma omp cancel sections
    }
#pragma omp section
    {
#pragma omp cancellation point sections
    }
  }
  say("a", a);
  return 0;
}
