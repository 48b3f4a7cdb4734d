// examples/naive_engine: a program with a framework's naive thread defaults —
// one "inter-op" worker per logical CPU, each running OpenMP regions with the
// default team size — doing real matrix work. Run it bare and under parwidth.
//
//   naive_engine [--workers N] [--iterations K] [--size S] [--inspect FILE]
//
// --inspect writes, while every thread is still alive, each thread's tid,
// name and allowed CPUs as the kernel sees them (/proc/self/task), and the
// OpenMP team sizes each worker got: what a test compares with the report.
#include <omp.h>
#include <pthread.h>
#include <unistd.h>

#include <dirent.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Config {
  int workers = 0;  // 0 = one per logical CPU (the naive default)
  int iterations = 20;
  int size = 192;
  std::string inspect;
};

// C = A * B for one operator; OpenMP splits the rows over the team.
double matmul(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
              int n, int* team_size) {
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        float s = 0;
        for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
        c[i * n + j] = s;
      }
    }
  }
  *team_size = team;
  double sum = 0;
  for (float x : c) sum += x;
  return sum;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string status_field(const std::string& status, const char* key) {
  const std::string k = std::string(key) + ":";
  size_t p = status.find(k);
  if (p == std::string::npos) return "";
  p += k.size();
  while (p < status.size() && (status[p] == ' ' || status[p] == '\t')) ++p;
  return status.substr(p, status.find('\n', p) - p);
}

void write_inspect(const std::string& path, const std::vector<int>& teams, int omp_max) {
  std::ostringstream o;
  o << "{\"pid\":" << getpid() << ",\"omp_max_threads\":" << omp_max << ",\"teams\":[";
  for (size_t i = 0; i < teams.size(); ++i) o << (i ? "," : "") << teams[i];
  o << "],\"tasks\":[";
  DIR* d = opendir("/proc/self/task");
  bool first = true;
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::string comm = read_file(base + "/comm");
    comm.erase(std::remove(comm.begin(), comm.end(), '\n'), comm.end());
    const std::string st = read_file(base + "/status");
    o << (first ? "" : ",") << "{\"tid\":" << e->d_name << ",\"comm\":\"" << comm
      << "\",\"cpus\":\"" << status_field(st, "Cpus_allowed_list") << "\"}";
    first = false;
  }
  if (d) closedir(d);
  o << "]}\n";
  std::ofstream(path) << o.str();
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* what) {
      if (i + 1 >= argc) {
        fprintf(stderr, "naive_engine: %s needs a value\n", what);
        exit(2);
      }
      return argv[++i];
    };
    if (!strcmp(argv[i], "--workers"))
      cfg.workers = atoi(next("--workers"));
    else if (!strcmp(argv[i], "--iterations"))
      cfg.iterations = atoi(next("--iterations"));
    else if (!strcmp(argv[i], "--size"))
      cfg.size = atoi(next("--size"));
    else if (!strcmp(argv[i], "--inspect"))
      cfg.inspect = next("--inspect");
    else {
      fprintf(stderr,
              "usage: naive_engine [--workers N] [--iterations K] [--size S] [--inspect FILE]\n");
      return 2;
    }
  }
  const int workers =
      cfg.workers > 0 ? cfg.workers : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const int n = cfg.size;
  std::vector<int> teams(workers, 0);
  std::vector<double> sums(workers, 0);
  // Workers finish their work, then wait while main inspects them; the
  // second phase releases them.
  pthread_barrier_t sync;
  pthread_barrier_init(&sync, nullptr, workers + 1);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      std::vector<float> a(n * n), b(n * n), c(n * n);
      for (int i = 0; i < n * n; ++i) {
        a[i] = static_cast<float>((i * 7 + w) % 13) / 13.0f;
        b[i] = static_cast<float>((i * 3 + 1) % 11) / 11.0f;
      }
      for (int it = 0; it < cfg.iterations; ++it) {
        int team = 0;
        sums[w] += matmul(a, b, c, n, &team);
        teams[w] = std::max(teams[w], team);
      }
      pthread_barrier_wait(&sync);
      pthread_barrier_wait(&sync);
    });
  }
  pthread_barrier_wait(&sync);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!cfg.inspect.empty()) write_inspect(cfg.inspect, teams, omp_get_max_threads());
  pthread_barrier_wait(&sync);
  for (auto& t : pool) t.join();
  pthread_barrier_destroy(&sync);

  double total = 0;
  for (double s : sums) total += s;
  printf("workers %d, iterations %d, size %d\n", workers, cfg.iterations, n);
  printf("time per iteration: %.3f ms\n", 1e3 * secs / cfg.iterations);
  printf("checksum: %.6e\n", total);
  return 0;
}
