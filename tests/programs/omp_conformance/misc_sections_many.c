/* misc_sections_many: more sections than threads. */
#include "conf.h"
int main(void) {
  int d[5] = {0};
#pragma omp parallel sections
  {
#pragma omp section
    d[0] = 1;
#pragma omp section
    d[1] = 1;
#pragma omp section
    d[2] = 1;
#pragma omp section
    d[3] = 1;
#pragma omp section
    d[4] = 1;
  }
  say_each("done", d, 5);
  return 0;
}
