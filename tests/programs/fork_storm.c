/* tests/programs/fork_storm.c: T threads each fork K children, one after
   another; every child starts a thread of its own (it activates), joins it
   and exits with a status of its own. Prints "ok T*K" when every child
   ended with the status it chose.

     fork_storm T K */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int per_thread = 10;

static void* idle(void* p) {
  return p;
}

static void* forker(void* arg) {
  long id = (long)arg;
  long bad = 0;
  for (int k = 0; k < per_thread; ++k) {
    pid_t pid = fork();
    if (pid == 0) {
      pthread_t t;
      if (pthread_create(&t, NULL, idle, NULL) != 0) _exit(100);
      pthread_join(t, NULL);
      exit((int)((id + k) % 50)); /* destructors run: the child's report path */
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != (id + k) % 50)
      ++bad;
  }
  return (void*)bad;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  per_thread = argc > 2 ? atoi(argv[2]) : 10;
  pthread_t* t = calloc((size_t)threads, sizeof *t);
  if (!t) return 1;
  for (long i = 0; i < threads; ++i)
    if (pthread_create(&t[i], NULL, forker, (void*)i) != 0) return 1;
  long bad = 0;
  for (int i = 0; i < threads; ++i) {
    void* r = NULL;
    pthread_join(t[i], &r);
    bad += (long)r;
  }
  if (bad) {
    printf("bad %ld\n", bad);
    return 1;
  }
  printf("ok %d\n", threads * per_thread);
  return 0;
}
