/* pth_set_then_workers: a pthread sets 3 and opens a region; its workers'
   omp_get_max_threads() is the inherited 3 (item 16). */
#include "conf.h"
static int g_max[MAXT], g_team;
static void* body(void* p) {
  (void)p;
  omp_set_num_threads(3);
#pragma omp parallel
  {
    g_max[omp_get_thread_num()] = omp_get_max_threads();
#pragma omp single
    g_team = omp_get_num_threads();
  }
  return NULL;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, body, NULL);
  pthread_join(t, NULL);
  say("n.team", g_team);
  say_each("n.max", g_max, g_team);
  return 0;
}
