/* bind_main_kept: the main thread's CPU set after regions is what it was. */
#include "conf.h"
int main(void) {
  char before[256], after[256];
  cpus_of_self(before, sizeof before);
  for (int r = 0; r < 3; ++r) {
#pragma omp parallel num_threads(2)
    {
      volatile int x = 0;
      x++;
    }
  }
  cpus_of_self(after, sizeof after);
  say("main_set_kept", !strcmp(before, after));
  return 0;
}
