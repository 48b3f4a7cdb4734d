/* tests/programs/omp_teams_lib.c: the body of omp_teams and of the library
   that dlopen_omp loads. Several pthreads each run OpenMP parallel regions with
   the default team size; while every thread is still alive, the program prints
   one JSON object: each thread's omp_get_max_threads() and team sizes, the
   main thread's, and every task's Cpus_allowed_list from /proc/self/task.

     omp_teams [--threads N] [--regions K] [--clause M] [--exit S] [--task-first]

   --clause M also runs one region with num_threads(M) per thread (an explicit
   request the governor must leave alone); --exit S exits with status S;
   --task-first runs a task outside any region before the threads start (it
   initialises the runtime's affinity before anything the governor sees). */
#define _GNU_SOURCE
#include <dirent.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_REGIONS 16

struct worker {
  long tid;
  int max_threads;
  int teams[MAX_REGIONS];
  int clause_team;
};

static int g_regions = 3;
static int g_clause = 0;
static int g_task_first = 0;
static pthread_barrier_t g_sync;

static int one_region(void) {
  int team = 0;
  volatile double sink = 0;
#pragma omp parallel
  {
    double s = 0;
    for (int i = 0; i < 20000; ++i) s += (double)i * 0.5;
#pragma omp critical
    sink += s;
#pragma omp single
    team = omp_get_num_threads();
  }
  (void)sink;
  return team;
}

static int clause_region(int n) {
  int team = 0;
#pragma omp parallel num_threads(n)
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}

/* A task outside any region, in a function of its own: clang fetches the
   OpenMP thread id at the entry of a function with a task, which is itself a
   first use of the runtime. */
__attribute__((noinline)) static int task_first(void) {
  int done = 0;
#pragma omp task shared(done)
  done = 1;
#pragma omp taskwait
  return done;
}

static void run_regions(struct worker* w) {
  w->tid = (long)syscall(SYS_gettid);
  w->max_threads = omp_get_max_threads();
  for (int r = 0; r < g_regions; ++r) w->teams[r] = one_region();
  w->clause_team = g_clause > 0 ? clause_region(g_clause) : 0;
}

static void* worker_main(void* p) {
  run_regions((struct worker*)p);
  pthread_barrier_wait(&g_sync); /* work done */
  pthread_barrier_wait(&g_sync); /* main has inspected /proc */
  return NULL;
}

static void read_line(const char* path, const char* key, char* out, size_t len) {
  out[0] = '\0';
  FILE* f = fopen(path, "r");
  if (!f) return;
  char line[512];
  const size_t klen = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (key[0] == '\0' || (strncmp(line, key, klen) == 0 && line[klen] == ':')) {
      const char* v = key[0] ? line + klen + 1 : line;
      while (*v == ' ' || *v == '\t') ++v;
      size_t n = strcspn(v, "\n");
      if (n >= len) n = len - 1;
      memcpy(out, v, n);
      out[n] = '\0';
      break;
    }
  }
  fclose(f);
}

static void print_worker(const struct worker* w) {
  printf("{\"tid\":%ld,\"max_threads\":%d,\"teams\":[", w->tid, w->max_threads);
  for (int r = 0; r < g_regions; ++r) printf("%s%d", r ? "," : "", w->teams[r]);
  printf("],\"clause_team\":%d}", w->clause_team);
}

static void print_tasks(void) {
  printf("\"tasks\":[");
  DIR* d = opendir("/proc/self/task");
  int first = 1;
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[300], cpus[256], comm[64];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    read_line(path, "Cpus_allowed_list", cpus, sizeof cpus);
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    read_line(path, "", comm, sizeof comm);
    printf("%s{\"tid\":%s,\"comm\":\"%s\",\"cpus\":\"%s\"}", first ? "" : ",", e->d_name, comm,
           cpus);
    first = 0;
  }
  if (d) closedir(d);
  printf("]");
}

__attribute__((visibility("default"))) int omp_teams_main(int argc, char** argv) {
  int nthreads = 2;
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--threads"))
      nthreads = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--regions"))
      g_regions = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--clause"))
      g_clause = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--exit"))
      status = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--task-first"))
      g_task_first = 1;
    else {
      fprintf(stderr,
              "usage: omp_teams [--threads N] [--regions K] [--clause M] [--exit S] "
              "[--task-first]\n");
      return 2;
    }
  }
  if (nthreads < 1 || nthreads > MAX_THREADS || g_regions < 1 || g_regions > MAX_REGIONS) {
    fprintf(stderr, "omp_teams: --threads 1..%d, --regions 1..%d\n", MAX_THREADS, MAX_REGIONS);
    return 2;
  }
  struct worker main_w, ws[MAX_THREADS];
  memset(&main_w, 0, sizeof main_w);
  memset(ws, 0, sizeof ws);
  pthread_t ts[MAX_THREADS];
  pthread_barrier_init(&g_sync, NULL, (unsigned)nthreads + 1);
  if (g_task_first && !task_first()) return 1;
  for (int i = 0; i < nthreads; ++i) {
    if (pthread_create(&ts[i], NULL, worker_main, &ws[i]) != 0) {
      fprintf(stderr, "omp_teams: pthread_create failed\n");
      return 1;
    }
  }
  pthread_barrier_wait(&g_sync);
  run_regions(&main_w);
#if defined(__clang__)
  const char* compiler = "clang";
#else
  const char* compiler = "gcc";
#endif
  printf("{\"pid\":%ld,\"compiler\":\"%s\",\"main\":", (long)getpid(), compiler);
  print_worker(&main_w);
  printf(",\"workers\":[");
  for (int i = 0; i < nthreads; ++i) {
    printf("%s", i ? "," : "");
    print_worker(&ws[i]);
  }
  printf("],");
  print_tasks();
  printf("}\n");
  fflush(stdout);
  pthread_barrier_wait(&g_sync);
  for (int i = 0; i < nthreads; ++i) pthread_join(ts[i], NULL);
  pthread_barrier_destroy(&g_sync);
  return status;
}
