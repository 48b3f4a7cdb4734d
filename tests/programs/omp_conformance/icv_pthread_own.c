/* icv_pthread_own: each pthread has its own nthreads ICV (GCC's icv-2 idea,
   written anew): threads set 2, 3, 4 and each sees its own, with its
   workers inheriting it. */
#include "conf.h"
static int g_max[8], g_team[8], g_worker_max[8][MAXT];
static pthread_barrier_t bar;
static void* body(void* p) {
  int i = (int)(long)p;
  omp_set_num_threads(i + 2);
  pthread_barrier_wait(&bar);
  g_max[i] = omp_get_max_threads();
#pragma omp parallel num_threads(i + 2)
  {
    g_worker_max[i][omp_get_thread_num()] = omp_get_max_threads();
#pragma omp single
    g_team[i] = omp_get_num_threads();
  }
  return NULL;
}
int main(void) {
  pthread_t t[3];
  pthread_barrier_init(&bar, NULL, 3);
  for (long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, body, (void*)i);
  for (int i = 0; i < 3; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < 3; ++i) {
    char k[32];
    snprintf(k, sizeof k, "n.thread%d_max", i);
    say(k, g_max[i]);
    snprintf(k, sizeof k, "thread%d_team", i);
    say(k, g_team[i]);
    snprintf(k, sizeof k, "n.thread%d_workers_max", i);
    say_each(k, g_worker_max[i], i + 2);
  }
  return 0;
}
