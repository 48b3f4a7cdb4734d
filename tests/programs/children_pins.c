/* tests/programs/children_pins.c: an OpenMP program that forks a busy child
   process, and where its team's threads may run meanwhile.

     children_pins

   The first parallel region comes before the fork (a governed process
   activates there). The child starts a thread that prints how many CPUs it
   may use ("child thread cpus N"), then spins until it is killed. The parent
   runs a parallel region every 20 ms, each team thread reading its own
   affinity, until every thread but the master may use more than one CPU or
   10 s have passed; prints "while the child runs: narrowest worker N"; then
   kills the child, waits for it, and does the same until every worker is
   back on one CPU: "after the child: widest worker N". */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int own_cpus(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* The fewest and the most CPUs a team thread other than the master may use. */
static void workers_cpus(int* fewest, int* most) {
  int lo = 1 << 20, hi = 0;
#pragma omp parallel reduction(min : lo) reduction(max : hi)
  {
    if (omp_get_thread_num() > 0) {
      const int n = own_cpus();
      lo = n;
      hi = n;
    }
  }
  *fewest = lo;
  *most = hi;
}

static void* child_thread(void* unused) {
  (void)unused;
  printf("child thread cpus %d\n", own_cpus());
  fflush(stdout);
  return NULL;
}

int main(void) {
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  if (team < 2) {
    printf("team %d: nothing to see\n", team);
    return 3;
  }
  fflush(stdout);
  const pid_t kid = fork();
  if (kid < 0) return 1;
  if (kid == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, child_thread, NULL) == 0) pthread_join(t, NULL);
    volatile double y = 0;
    for (;;) y += 1;
  }
  int fewest = 0, most = 0;
  double t0 = now_s();
  do {
    usleep(20000);
    workers_cpus(&fewest, &most);
  } while (fewest < 2 && now_s() - t0 < 10);
  printf("while the child runs: narrowest worker %d\n", fewest);
  fflush(stdout);
  kill(kid, SIGKILL);
  waitpid(kid, NULL, 0);
  t0 = now_s();
  do {
    usleep(20000);
    workers_cpus(&fewest, &most);
  } while (most > 1 && now_s() - t0 < 10);
  printf("after the child: widest worker %d\n", most);
  return 0;
}
