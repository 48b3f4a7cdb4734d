/* pth_many_regions: four pthreads, many small regions each, with their own
   counts (1..4). */
#include "conf.h"
static int g_team[4];
static void* body(void* p) {
  int i = (int)(long)p;
  for (int r = 0; r < 20; ++r) {
#pragma omp parallel num_threads(i + 1)
#pragma omp single
    g_team[i] = omp_get_num_threads();
  }
  return NULL;
}
int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; ++i) pthread_create(&t[i], NULL, body, (void*)i);
  for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  say_each("teams", g_team, 4);
  return 0;
}
