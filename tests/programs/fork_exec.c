/* tests/programs/fork_exec.c: fork + exec, and a forked child that creates
   threads of its own (a governed process of its own under the preload).

     fork_exec            the full scenario, deterministic output
     fork_exec --exit N   exit with status N (the exec'd child) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void* square(void* p) {
  long v = (long)p;
  return (void*)(v * v);
}

static int run_threads(void) {
  pthread_t t[3];
  long sum = 0;
  for (long i = 0; i < 3; ++i)
    if (pthread_create(&t[i], NULL, square, (void*)(i + 2)) != 0) return -1;
  for (int i = 0; i < 3; ++i) {
    void* r = NULL;
    pthread_join(t[i], &r);
    sum += (long)r;
  }
  return (int)sum; /* 4 + 9 + 16 */
}

static int wait_status(pid_t pid, const char* what) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) {
    printf("%s: waitpid failed\n", what);
    return -1;
  }
  if (WIFEXITED(st))
    printf("%s: exit %d\n", what, WEXITSTATUS(st));
  else
    printf("%s: signal %d\n", what, WIFSIGNALED(st) ? WTERMSIG(st) : -1);
  fflush(stdout);
  return st;
}

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[1], "--exit")) return atoi(argv[2]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* The parent is threaded too, so that it is governed before it forks. */
  printf("parent threads: %d\n", run_threads());

  pid_t p = fork();
  if (p == 0) {
    execl("/bin/echo", "echo", "hello from exec", (char*)NULL);
    _exit(127);
  }
  wait_status(p, "echo child");

  p = fork();
  if (p == 0) {
    execl("/proc/self/exe", argv[0], "--exit", "5", (char*)NULL);
    _exit(127);
  }
  wait_status(p, "self child");

  p = fork();
  if (p == 0) {
    int s = run_threads();
    printf("threaded child: %d\n", s);
    fflush(stdout);
    exit(s == 29 ? 6 : 1);
  }
  wait_status(p, "threaded child");

  p = fork();
  if (p == 0) _exit(9);
  wait_status(p, "plain child");
  printf("parent threads again: %d\n", run_threads());
  return 4;
}
