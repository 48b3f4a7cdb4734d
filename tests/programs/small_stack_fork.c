/* tests/programs/small_stack_fork.c: a thread with the smallest stack
   (PTHREAD_STACK_MIN) forks; the child starts a thread of its own, which is
   where a governed child activates. Prints "child exit 0" when the child
   ended normally, "child signal N" when it was killed.

     small_stack_fork */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void* idle(void* p) {
  return p;
}

static void* forker(void* arg) {
  (void)arg;
  pid_t pid = fork();
  if (pid == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0) _exit(1);
    pthread_join(t, NULL);
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return (void*)1;
  if (WIFEXITED(status))
    printf("child exit %d\n", WEXITSTATUS(status));
  else
    printf("child signal %d\n", WTERMSIG(status));
  return NULL;
}

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  pthread_t t;
  if (pthread_create(&t, &attr, forker, NULL) != 0) return 1;
  void* r = NULL;
  pthread_join(t, &r);
  return r == NULL ? 0 : 1;
}
