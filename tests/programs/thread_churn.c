/* tests/programs/thread_churn.c: N short-lived threads, one after another
   (each joined before the next starts), then one that stays until exit.

     thread_churn N    prints "done N" */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void* idle(void* p) {
  return p;
}

static void* waiter(void* p) {
  pthread_barrier_wait((pthread_barrier_t*)p);
  return NULL;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  for (long i = 0; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0) return 1;
    pthread_join(t, NULL);
  }
  pthread_barrier_t b;
  pthread_barrier_init(&b, NULL, 2);
  pthread_t t;
  if (pthread_create(&t, NULL, waiter, &b) != 0) return 1;
  printf("done %ld\n", n);
  fflush(stdout);
  pthread_barrier_wait(&b);
  pthread_join(t, NULL);
  return 0;
}
