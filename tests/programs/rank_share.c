// A launcher's rank as tests/integration/test_vm_sockets.py runs it inside a
// 2-socket guest: it runs an OpenMP team whose master is the main thread and
// keeps a pthread of its own alive, forks a child, and then writes what /proc
// says of every one of its threads while they are all still alive:
//
//   affinity LIST          sched_getaffinity(0) of the main thread
//   task TID LIST          Cpus_allowed_list of each thread in /proc/self/task
//   child LIST             sched_getaffinity(0) of a child made with fork()
//   team N                 the size of the last OpenMP team
//
// into the file named by argv[1] (written once, at the end: ranks run side by
// side and the guest's console would interleave them).
//
//   rank_share OUT HOLD   a process that no launcher describes: keeps its team
//                         busy until its affinity has narrowed (the node
//                         registry divided the node) and stayed the same for
//                         half a second, writes OUT, and stays busy until the
//                         file HOLD exists, so that its neighbours keep their shares.
#define _GNU_SOURCE
#include <dirent.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_stop;
static volatile double g_sink;

static void* helper(void* arg) {
  while (!atomic_load(&g_stop)) usleep(1000);
  return arg;
}

// "0-3,8" style list of the CPUs in `set`, written into out.
static void cpus_format(const cpu_set_t* set, char* out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set)) ++e;
    int w = e > c ? snprintf(out + n, size - n, "%s%d-%d", n ? "," : "", c, e)
                  : snprintf(out + n, size - n, "%s%d", n ? "," : "", c);
    if (w < 0 || (size_t)w >= size - n) break;
    n += (size_t)w;
    c = e;
  }
}

// One busy OpenMP region; returns its team size.
static int region(void) {
  int team = 0;
#pragma omp parallel
  {
    double x = 0;
    for (int i = 0; i < 200000; ++i) x += i * 0.5;
#pragma omp atomic
    g_sink += x;
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}

static int cpu_count_now(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Busy until the affinity is narrower than `start` and unchanged for 0.5 s (or 120 s pass).
static int busy_until_narrowed(int start) {
  int team = region(), last = cpu_count_now();
  double since = seconds_now(), deadline = since + 120;
  while (seconds_now() < deadline) {
    team = region();
    int now = cpu_count_now();
    if (now != last) {
      last = now;
      since = seconds_now();
    } else if (now < start && seconds_now() - since >= 0.5) {
      break;
    }
  }
  return team;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: rank_share OUT [HOLD]\n");
    return 2;
  }
  const char* hold = argc == 3 ? argv[2] : NULL;
  int team = 0;
  if (hold) {
    team = busy_until_narrowed(cpu_count_now());
  } else {
    for (int k = 0; k < 3; ++k) team = region();
  }
  pthread_t t;
  if (pthread_create(&t, NULL, helper, NULL) != 0) return 1;

  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    cpu_set_t set;
    char list[4096] = "?";
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus_format(&set, list, sizeof list);
    ssize_t w = write(fds[1], list, strlen(list));
    _exit(w > 0 ? 0 : 1);
  }
  close(fds[1]);
  char child_list[4096] = "";
  ssize_t got = read(fds[0], child_list, sizeof child_list - 1);
  child_list[got > 0 ? got : 0] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);

  static char out[1 << 16];
  size_t n = 0;
  cpu_set_t set;
  char list[4096] = "?";
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus_format(&set, list, sizeof list);
  n += (size_t)snprintf(out + n, sizeof out - n, "affinity %s\n", list);
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[320], line[4096];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
        char* v = line + 18;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = '\0';
        if (n < sizeof out)
          n += (size_t)snprintf(out + n, sizeof out - n, "task %s %s\n", e->d_name, v);
      }
    }
    fclose(f);
  }
  if (d) closedir(d);
  if (n < sizeof out)
    n += (size_t)snprintf(out + n, sizeof out - n, "child %s\nteam %d\n", child_list, team);

  FILE* f = fopen(argv[1], "w");
  if (!f || fwrite(out, 1, n < sizeof out ? n : sizeof out, f) == 0 || fclose(f) != 0) return 1;
  while (hold && access(hold, F_OK) != 0) region();
  atomic_store(&g_stop, 1);
  pthread_join(t, NULL);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
