/* tests/programs/idle_threads.c: N threads that wait (idle) while the main
   thread sleeps for MS milliseconds, then all end.

     idle_threads N MS    prints "done N" */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;

static void* wait_done(void* p) {
  pthread_mutex_lock(&mu);
  while (!done) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return p;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  long ms = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t* t = calloc((size_t)n, sizeof *t);
  if (!t) return 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < n; ++i)
    if (pthread_create(&t[i], &attr, wait_done, NULL) != 0) return 1;
  struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&d, NULL);
  pthread_mutex_lock(&mu);
  done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
  printf("done %d\n", n);
  free(t);
  return 0;
}
