/* dyn_pthread: a pthread's omp_set_dynamic does not reach main. */
#include "conf.h"
static int g_d;
static void* body(void* p) {
  (void)p;
  omp_set_dynamic(1);
  g_d = omp_get_dynamic();
  return NULL;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, body, NULL);
  pthread_join(t, NULL);
  say("pthread", g_d);
  say("main", omp_get_dynamic());
  return 0;
}
