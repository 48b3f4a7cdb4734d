/* tests/programs/clone_exit.c: a child made with raw clone() (no fork
   handlers run in it) that calls exit(): it must end with its own status
   and its output, as it does bare. The parent starts a thread first, so a
   governed parent has activated (and started its monitor) before the clone.

     clone_exit        prints "child 7" from the child, then "parent 7" */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void* idle(void* p) {
  return p;
}

static int child(void* arg) {
  (void)arg;
  printf("child 7\n");
  exit(7); /* runs the destructors, and flushes stdout */
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, idle, NULL) != 0) return 1;
  pthread_join(t, NULL);
  fflush(stdout);
  const size_t size = 1 << 20;
  char* stack = malloc(size);
  if (!stack) return 1;
  pid_t pid = clone(child, stack + size, SIGCHLD, NULL);
  if (pid < 0) return 1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 1;
  printf("parent %d\n", WEXITSTATUS(status));
  return 0;
}
