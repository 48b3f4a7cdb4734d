/* bind_false_pthread: OMP_PROC_BIND=false, regions from a pthread: the
   OpenMP workers keep the process's set (item 19). */
// env: OMP_PROC_BIND=false
#include "conf.h"
static char g_proc[256];
static int g_same[MAXT];
static void* body(void* p) {
  (void)p;
#pragma omp parallel num_threads(2)
  {
    char c[256];
    cpus_of_self(c, sizeof c);
    g_same[omp_get_thread_num()] = !strcmp(c, g_proc);
  }
  return NULL;
}
int main(void) {
  cpus_of_self(g_proc, sizeof g_proc);
  pthread_t t;
  pthread_create(&t, NULL, body, NULL);
  pthread_join(t, NULL);
  say("worker_has_process_set", g_same[1]);
  return 0;
}
