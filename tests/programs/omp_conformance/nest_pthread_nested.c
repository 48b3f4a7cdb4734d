/* nest_pthread_nested: a pthread enables nesting for itself only. */
#include "conf.h"
static int g_inner[MAXT];
static void* body(void* p) {
  (void)p;
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
#pragma omp parallel num_threads(2)
#pragma omp single
    g_inner[t] = omp_get_num_threads();
  }
  return NULL;
}
int main(void) {
  pthread_t t;
  int inner[MAXT] = {0};
  pthread_create(&t, NULL, body, NULL);
  pthread_join(t, NULL);
#pragma omp parallel num_threads(2)
  {
    int i = omp_get_thread_num();
#pragma omp parallel num_threads(2)
#pragma omp single
    inner[i] = omp_get_num_threads();
  }
  say_each("pthread_inner", g_inner, 2);
  say_each("main_inner", inner, 2);
  return 0;
}
