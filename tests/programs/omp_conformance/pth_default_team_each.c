/* pth_default_team_each: every pthread's default team equals its own
   omp_get_max_threads(). */
#include "conf.h"
static int g_ok[3];
static void* body(void* p) {
  int i = (int)(long)p;
  int team = 0, max = omp_get_max_threads();
#pragma omp parallel
#pragma omp single
  team = omp_get_num_threads();
  g_ok[i] = team == max;
  return NULL;
}
int main(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, body, (void*)i);
  for (int i = 0; i < 3; ++i) pthread_join(t[i], NULL);
  say_each("team_is_max", g_ok, 3);
  return 0;
}
