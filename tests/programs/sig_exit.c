/* tests/programs/sig_exit.c: _exit() from a signal handler, as programs do
   (it is async-signal-safe). Threads come and go and the main thread
   allocates blocks larger than malloc's per-thread cache, so the signal
   lands while the allocator's lock or parwidth's are held; the handler's
   _exit must end the process with its status all the same.

     sig_exit          exits 3 from a SIGALRM handler within a second
     sig_exit plain    starts a thread, then calls _exit(5) outside any handler */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void on_alarm(int sig) {
  (void)sig;
  _exit(3);
}

static void* work(void* arg) {
  void* p = malloc(4000 + (size_t)arg % 30000);
  if (p) memset(p, 1, 64);
  free(p);
  return NULL;
}

int main(int argc, char** argv) {
  pthread_t t;
  if (argc > 1 && strcmp(argv[1], "plain") == 0) {
    if (pthread_create(&t, NULL, work, NULL) != 0) return 1;
    pthread_join(t, NULL);
    _exit(5);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  /* The first expiry after the process has activated and its monitor runs. */
  if (pthread_create(&t, NULL, work, NULL) == 0) pthread_join(t, NULL);
  struct itimerval it = {{0, 0}, {0, 20000 + (getpid() % 7) * 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  for (size_t i = 0;; ++i) {
    if (i % 64 == 63 && pthread_create(&t, NULL, work, (void*)i) == 0) pthread_join(t, NULL);
    void* p[16];
    for (int k = 0; k < 16; ++k) p[k] = malloc(1100 + (i * 131 + (size_t)k * 977) % 100000);
    for (int k = 0; k < 16; ++k) free(p[k]);
  }
}
