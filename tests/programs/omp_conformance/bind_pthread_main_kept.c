/* bind_pthread_main_kept: regions from a pthread first, then main: the main
   thread keeps the process's set. */
#include "conf.h"
static void* body(void* p) {
  (void)p;
#pragma omp parallel num_threads(2)
  {
    volatile int x = 0;
    x++;
  }
  return NULL;
}
int main(void) {
  char before[256], after[256];
  cpus_of_self(before, sizeof before);
  pthread_t t;
  pthread_create(&t, NULL, body, NULL);
  pthread_join(t, NULL);
#pragma omp parallel num_threads(2)
  {
    volatile int x = 0;
    x++;
  }
  cpus_of_self(after, sizeof after);
  say("main_set_kept", !strcmp(before, after));
  return 0;
}
