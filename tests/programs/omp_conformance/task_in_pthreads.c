/* task_in_pthreads: two pthreads each run tasking regions. */
#include "conf.h"
static long g_sum[2];
static void* body(void* p) {
  int i = (int)(long)p;
  long s = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp taskloop reduction(+ : s)
    for (int k = 0; k < 100; ++k) s += k * (i + 1);
  }
  g_sum[i] = s;
  return NULL;
}
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, body, (void*)i);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  say("sum0", g_sum[0]);
  say("sum1", g_sum[1]);
  return 0;
}
