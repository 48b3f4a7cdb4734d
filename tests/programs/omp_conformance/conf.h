/* tests/programs/omp_conformance/conf.h: helpers shared by the conformance
   programs. Each program prints "key: value" lines in an order that does not
   depend on scheduling. Keys starting with "n." are thread counts derived from
   a count the program (or OMP_NUM_THREADS) asked for: PARWIDTH_OVERRIDE=1 may
   lower them to the plan's threads per pool, and nothing else (README.md). */
#ifndef PW_CONF_H
#define PW_CONF_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 64

static inline void say(const char* key, long v) {
  printf("%s: %ld\n", key, v);
}

static inline void say_s(const char* key, const char* v) {
  printf("%s: %s\n", key, v);
}

/* n values in thread order, on one line. */
static inline void say_each(const char* key, const int* v, int n) {
  printf("%s:", key);
  for (int i = 0; i < n && i < MAXT; ++i) printf(" %d", v[i]);
  printf("\n");
}

/* The calling thread's CPU set as a list ("0-3,6"). */
static inline void cpus_of_self(char* out, size_t len) {
  cpu_set_t set;
  out[0] = '\0';
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  size_t off = 0;
  for (int c = 0; c < CPU_SETSIZE && off + 16 < len; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    off += (size_t)snprintf(out + off, len - off, off ? ",%d" : "%d", c);
    if (e > c) off += (size_t)snprintf(out + off, len - off, "-%d", e);
    c = e;
  }
}

/* 1 if a == b, as a printable fact that does not depend on the machine. */
#define SAME(a, b) ((long)((a) == (b)))

#endif
