/* ws_critical_atomic: critical and atomic updates from a team. */
#include "conf.h"
int main(void) {
  long a = 0, c = 0;
#pragma omp parallel num_threads(3)
  {
    for (int i = 0; i < 1000; ++i) {
#pragma omp atomic
      a++;
#pragma omp critical(named)
      c += 2;
    }
  }
  say("atomic", a);
  say("critical", c);
  return 0;
}
