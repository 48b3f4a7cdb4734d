/* pth_fork_child: a region, fork(), a serialized region in the child (a
   libgomp team does not survive fork), its exit status back to the parent. */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>
#include "conf.h"
int main(void) {
  int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  team = omp_get_num_threads();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int t2 = 0;
#pragma omp parallel if (0)
    t2 = omp_get_num_threads();
    printf("child_team: %d\n", t2);
    fflush(stdout);
    _exit(3);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  say("parent_team", team);
  say("child_status", WEXITSTATUS(st));
  return 0;
}
