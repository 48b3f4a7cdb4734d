/* tests/programs/forked_workers.c: an OpenMP program whose forked worker
   processes (as a data loader's are) busy the same CPUs as its team.

     forked_workers KIDS SECONDS

   The first parallel region comes before the fork (a governed process
   activates there, so its inherited counters see the children); then KIDS
   children spin for SECONDS while the team runs parallel regions for as long.
   Prints "regions R team T kids K". */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  int kids = argc > 1 ? atoi(argv[1]) : 2;
  double secs = argc > 2 ? atof(argv[2]) : 3;
  if (kids < 0 || kids > 256 || !(secs > 0)) {
    fprintf(stderr, "usage: forked_workers KIDS SECONDS\n");
    return 2;
  }
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  pid_t* pids = calloc((size_t)kids + 1, sizeof *pids);
  if (!pids) return 1;
  const double t0 = now_s();
  for (int k = 0; k < kids; ++k) {
    pids[k] = fork();
    if (pids[k] < 0) return 1;
    if (pids[k] == 0) {
      volatile double y = 0;
      while (now_s() - t0 < secs) y += 1;
      _exit(0);
    }
  }
  long regions = 0;
  double x = 0;
  while (now_s() - t0 < secs) {
#pragma omp parallel for reduction(+ : x) schedule(static)
    for (int i = 0; i < 200000; ++i) x += sin((double)i) * 1e-9;
    ++regions;
  }
  for (int k = 0; k < kids; ++k) waitpid(pids[k], NULL, 0);
  printf("regions %ld team %d kids %d (%g)\n", regions, team, kids, x > 1e9 ? x : 0.0);
  free(pids);
  return 0;
}
