/* tests/programs/plan_changes.c: an OpenMP program whose plan in force changes
   while it runs: first its node share (a neighbour joins; the test stops it),
   then its own OpenMP cap (it oversubscribes itself with busy threads until
   the monitor lowers the cap). At the end it prints what its OpenMP runtime
   itself says is in force. Built against libgomp (plan_changes) and LLVM's
   libomp (plan_changes_clang).

     plan_changes             the phases below, one line each on stdout:
                                start <omp_get_max_threads> <cpus>
                                narrowed <cpus>     (its affinity shrank: a neighbour joined)
                                widened <cpus>      (the neighbour left)
                                end <omp_get_max_threads>
                              "timeout <phase>" and exit 3 if a phase waits 90 s
     plan_changes neighbour   OpenMP work until killed */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile double sink;

static void regions(int n) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int k = 0; k < 200000; ++k) s += (double)k * 1e-9;
    sink += s;
  }
}

static int cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void* busy(void* arg) {
  (void)arg;
  for (;;) sink += 1;
  return NULL;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 1 && strcmp(argv[1], "neighbour") == 0) {
    for (;;) regions(50);
  }
  regions(20);
  const int start = omp_get_max_threads(), full = cpus();
  printf("start %d %d\n", start, full);
  double t0 = now();
  while (cpus() >= full) {
    regions(20);
    if (now() - t0 > 90) return printf("timeout narrowing\n"), 3;
  }
  printf("narrowed %d\n", cpus());
  t0 = now();
  while (cpus() < full) {
    regions(20);
    if (now() - t0 > 90) return printf("timeout widening\n"), 3;
  }
  printf("widened %d\n", cpus());
  /* Oversubscribed by its own threads: twice its CPUs of busy threads beside its team. */
  pthread_t t;
  for (int i = 0; i < 2 * full; ++i) pthread_create(&t, NULL, busy, NULL);
  t0 = now();
  while (omp_get_max_threads() >= start && start > 1) {
    regions(5);
    if (now() - t0 > 90) return printf("timeout cap\n"), 3;
  }
  printf("end %d\n", omp_get_max_threads());
  return 0;
}
