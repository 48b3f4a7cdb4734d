// bench/preload_cost: side by side, in one run, interleaved:
//   - wall time of spawning and waiting for /bin/true with no preload, with an
//     empty preload and with libparwidth.so (median, min, max over N runs each);
//   - the latency of pthread_create + pthread_join in a program run with and
//     without libparwidth.so (the first creation, which activates the governor,
//     apart from the steady state; every thread pinned under the preload);
//   - the monitor's CPU time in a process with I idle threads over S seconds,
//     against the whole process's CPU time with no preload.
//
//   bench_preload_cost [--runs N] [--threads M] [--idle I] [--seconds S] [--lib PATH]
//                      [--empty PATH]
//
// Defaults: N = 200, M = 2000, I = 2000, S = 5, the libraries next to this
// program (../lib). The load average is printed before and after: numbers
// taken on a busy machine say so.
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.min = v.front();
  s.max = v.back();
  return s;
}

// The environment without any preload or parwidth setting, plus `preload`.
std::vector<std::string> make_env(const std::string& preload) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (!strncmp(*e, "LD_PRELOAD=", 11) || !strncmp(*e, "PARWIDTH_", 9)) continue;
    env.emplace_back(*e);
  }
  if (!preload.empty()) env.push_back("LD_PRELOAD=" + preload);
  return env;
}

// Runs argv with env, returns its stdout; *us gets the wall time of spawn + wait.
std::string run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                double* us, int* status) {
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return "";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  const double t0 = now_us();
  pid_t pid;
  int rc = posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    waitpid(pid, status, 0);
  } else {
    *status = -1;
  }
  *us = now_us() - t0;
  close(fds[0]);
  return out;
}

void* nothing(void*) {
  return nullptr;
}

// Child mode: times M pthread_create + join; prints "first steady..." in us.
int threads_child(int m) {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(m) + 1);
  for (int i = 0; i <= m; ++i) {
    pthread_t t;
    const double t0 = now_us();
    if (pthread_create(&t, nullptr, nothing, nullptr) != 0) return 1;
    pthread_join(t, nullptr);
    v.push_back(now_us() - t0);
  }
  for (double x : v) printf("%.3f\n", x);
  return 0;
}

void* wait_forever(void*) {
  for (;;) pause();
  return nullptr;
}

// CPU seconds (schedstat's time on a CPU, in ns) of this process's threads
// named `comm`, or of all of them when comm is empty.
double task_cpu_s(const char* comm) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  double ns = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char path[320], buf[256];
    if (*comm) {
      snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
      FILE* f = fopen(path, "r");
      if (!f) continue;
      const bool got = fgets(buf, sizeof buf, f) != nullptr;
      fclose(f);
      if (!got || strncmp(buf, comm, strlen(comm)) != 0) continue;
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    unsigned long long run = 0;
    if (fscanf(f, "%llu", &run) == 1) ns += static_cast<double>(run);
    fclose(f);
  }
  closedir(d);
  return ns / 1e9;
}

// Child mode: `idle` threads that never wake, `seconds` of sleep; prints the
// monitor thread's CPU seconds and the whole process's.
int idle_child(int idle, double seconds) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < idle; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, wait_forever, nullptr) != 0) return 1;
  }
  // Let the creation settle, then measure over the interval only.
  usleep(2000 * 1000);
  const double mon0 = task_cpu_s("parwidth-mon"), all0 = task_cpu_s("");
  usleep(static_cast<useconds_t>(seconds * 1e6));
  printf("%.4f %.4f\n", task_cpu_s("parwidth-mon") - mon0, task_cpu_s("") - all0);
  fflush(stdout);
  _exit(0);
}

std::string loadavg() {
  FILE* f = fopen("/proc/loadavg", "r");
  char buf[128] = "?";
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
  }
  std::string s(buf);
  return s.substr(0, s.find(' ', s.find(' ', s.find(' ') + 1) + 1));
}

// This program's real path: the build's bin/ holds it, with lib/ beside bin/.
std::string self_exe() {
  char* p = realpath("/proc/self/exe", nullptr);
  std::string s = p ? p : "./bench_preload_cost";
  free(p);
  return s;
}

std::string self_dir() {
  const std::string e = self_exe();
  return e.substr(0, e.rfind('/'));
}

void row(const char* name, const Stats& s, const Stats& base, const char* base_name) {
  printf("  %-26s median %9.1f  min %9.1f  max %9.1f   median ratio vs %s: %.2fx\n", name, s.median,
         s.min, s.max, base_name, base.median > 0 ? s.median / base.median : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200, threads = 2000, idle = 2000;
  double seconds = 5;
  const std::string dir = self_dir();
  std::string lib = dir + "/../lib/libparwidth.so", empty = dir + "/../lib/libpw_empty_preload.so";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads-child" && i + 1 < argc) return threads_child(atoi(argv[i + 1]));
    if (a == "--idle-child" && i + 2 < argc)
      return idle_child(atoi(argv[i + 1]), atof(argv[i + 2]));
    if (a == "--runs" && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (a == "--idle" && i + 1 < argc)
      idle = atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (a == "--lib" && i + 1 < argc)
      lib = argv[++i];
    else if (a == "--empty" && i + 1 < argc)
      empty = argv[++i];
    else {
      fprintf(stderr,
              "usage: bench_preload_cost [--runs N] [--threads M] [--idle I] [--seconds S] "
              "[--lib P] [--empty P]\n");
      return 2;
    }
  }
  char real[PATH_MAX];
  if (!realpath(lib.c_str(), real)) {
    fprintf(stderr, "bench_preload_cost: cannot find %s\n", lib.c_str());
    return 2;
  }
  lib = real;
  if (!realpath(empty.c_str(), real)) {
    fprintf(stderr, "bench_preload_cost: cannot find %s\n", empty.c_str());
    return 2;
  }
  empty = real;

  printf("load average before: %s\n\n", loadavg().c_str());

  // 1. /bin/true, the three ways interleaved round by round.
  const std::vector<std::string> envs[3] = {make_env(""), make_env(empty), make_env(lib)};
  const char* names[3] = {"no preload", "empty preload", "libparwidth.so"};
  std::vector<double> t[3];
  for (int w = 0; w < 5; ++w)  // warm the page cache
    for (const auto& e : envs) {
      double us;
      int st;
      run({"/bin/true"}, e, &us, &st);
    }
  for (int r = 0; r < runs; ++r) {
    for (int k = 0; k < 3; ++k) {
      const int v = (r + k) % 3;  // rotate the order each round
      double us;
      int st = 0;
      run({"/bin/true"}, envs[v], &us, &st);
      if (st != 0) {
        fprintf(stderr, "bench_preload_cost: /bin/true failed under %s\n", names[v]);
        return 1;
      }
      t[v].push_back(us);
    }
  }
  Stats s[3] = {stats(t[0]), stats(t[1]), stats(t[2])};
  printf("/bin/true: spawn + wait, microseconds, %d runs each, interleaved\n", runs);
  row(names[0], s[0], s[0], names[0]);
  row(names[1], s[1], s[0], names[0]);
  row(names[2], s[2], s[1], names[1]);
  printf("  libparwidth.so vs no preload: %.2fx; added over the empty preload: %.1f us\n\n",
         s[2].median / s[0].median, s[2].median - s[1].median);

  // 2. pthread_create + join, in this program run without and with the preload,
  // a few times each, alternating.
  const int reps = 5;
  std::vector<double> first[2], steady[2];
  const std::vector<std::string> tenv[2] = {make_env(""), make_env(lib)};
  for (int r = 0; r < reps * 2; ++r) {
    const int v = r % 2;
    double us;
    int st = 0;
    const std::string out =
        run({self_exe(), "--threads-child", std::to_string(threads)}, tenv[v], &us, &st);
    if (st != 0) {
      fprintf(stderr, "bench_preload_cost: thread child failed\n");
      return 1;
    }
    bool is_first = true;
    for (size_t p = 0; p < out.size();) {
      size_t q = out.find('\n', p);
      if (q == std::string::npos) q = out.size();
      const double x = atof(out.substr(p, q - p).c_str());
      (is_first ? first[v] : steady[v]).push_back(x);
      is_first = false;
      p = q + 1;
    }
  }
  Stats f[2] = {stats(first[0]), stats(first[1])}, d[2] = {stats(steady[0]), stats(steady[1])};
  printf("pthread_create + join: microseconds, %d threads x %d processes each way\n", threads,
         reps);
  row("no preload", d[0], d[0], "no preload");
  row("libparwidth.so", d[1], d[0], "no preload");
  printf("  added latency per thread (median): %.1f us\n", d[1].median - d[0].median);
  printf("  first thread of a process (activation under the preload):\n");
  row("no preload", f[0], f[0], "no preload");
  row("libparwidth.so", f[1], f[0], "no preload");
  printf("  added by activation (median): %.1f us\n\n", f[1].median - f[0].median);

  // 3. The monitor with idle threads: its own CPU time against the period.
  std::vector<double> mon, all[2];
  for (int r = 0; r < 3 * 2; ++r) {
    const int v = r % 2;
    double us;
    int st = 0;
    const std::string out =
        run({self_exe(), "--idle-child", std::to_string(idle), std::to_string(seconds)}, tenv[v],
            &us, &st);
    double m = 0, a = 0;
    if (st != 0 || sscanf(out.c_str(), "%lf %lf", &m, &a) != 2) {
      fprintf(stderr, "bench_preload_cost: idle child failed\n");
      return 1;
    }
    if (v == 1) mon.push_back(100 * m / seconds);
    all[v].push_back(100 * a / seconds);
  }
  const Stats ms = stats(mon), a0 = stats(all[0]), a1 = stats(all[1]);
  printf("%d idle threads, %.0f s: CPU time as %% of one core, 3 processes each way\n", idle,
         seconds);
  printf("  %-26s median %9.2f  min %9.2f  max %9.2f\n", "monitor thread", ms.median, ms.min,
         ms.max);
  printf("  %-26s median %9.2f  min %9.2f  max %9.2f\n", "process, libparwidth.so", a1.median,
         a1.min, a1.max);
  printf("  %-26s median %9.2f  min %9.2f  max %9.2f\n", "process, no preload", a0.median, a0.min,
         a0.max);
  printf("\nload average after: %s\n", loadavg().c_str());
  return 0;
}
