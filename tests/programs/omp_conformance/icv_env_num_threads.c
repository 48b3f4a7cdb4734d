/* icv_env_num_threads: OMP_NUM_THREADS=3 is kept (the user's), by every thread. */
// env: OMP_NUM_THREADS=3
#include "conf.h"
static int g_team;
static void* body(void* p) {
  (void)p;
#pragma omp parallel
#pragma omp single
  g_team = omp_get_num_threads();
  return NULL;
}
int main(void) {
  int team = 0;
#pragma omp parallel
#pragma omp single
  team = omp_get_num_threads();
  pthread_t t;
  pthread_create(&t, NULL, body, NULL);
  pthread_join(t, NULL);
  say("n.main_team", team);
  say("n.pthread_team", g_team);
  say("n.max", omp_get_max_threads());
  return 0;
}
