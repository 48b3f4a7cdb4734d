// Times stats_compute on generated DAGs of 10^4, 10^5 and 10^6 nodes, each size in its own
// child process so that ru_maxrss (a high-water mark) is that size's own peak.
//   bench_width [REPEATS]   (default 7)
// Prints min/median/max seconds, the peak-RSS growth caused by the computation, and the
// median time ratio per 10x nodes (10 means linear).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "graph/graph.h"

namespace {

// A model-like DAG: each node reads 1-3 of the 64 nodes before it, a third are heavy.
pw::graph::Graph make_graph(size_t n) {
  pw::graph::Graph g;
  g.nodes.resize(n);
  uint64_t x = 88172645463325252ull;
  auto rnd = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  for (size_t i = 0; i < n; ++i) {
    pw::graph::Node& v = g.nodes[i];
    v.heavy = rnd() % 3 == 0;
    v.op = v.heavy ? "Conv" : "Relu";
    size_t k = i ? 1 + rnd() % 3 : 0;
    for (size_t j = 0; j < k; ++j)
      v.preds.push_back(static_cast<uint32_t>(i - 1 - rnd() % std::min<size_t>(i, 64)));
  }
  return g;
}

long maxrss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

struct Result {
  double min, median, max;
  long graph_kb, compute_kb;
  unsigned long long heavy, layers;
};

Result measure(size_t n, int repeats) {
  long base = maxrss_kb();
  pw::graph::Graph g = make_graph(n);
  long built = maxrss_kb();
  std::vector<double> t;
  pw::graph::Stats s;
  std::string err;
  for (int r = 0; r < repeats; ++r) {
    auto a = std::chrono::steady_clock::now();
    if (pw::graph::stats_compute(g, &s, &err) != pw::graph::Status::kOk) std::exit(3);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return {t.front(),           t[t.size() / 2], t.back(), built - base,
          maxrss_kb() - built, s.heavy,         s.layers};
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  std::printf("%-9s %10s %10s %10s %12s %14s %9s %9s\n", "nodes", "min s", "median s", "max s",
              "graph MiB", "compute +MiB", "heavy", "layers");
  double prev = 0, prev_min = 0;
  std::vector<double> ratios, min_ratios;
  for (size_t n : {10000u, 100000u, 1000000u}) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      Result r = measure(n, repeats);
      ssize_t w = write(fds[1], &r, sizeof(r));
      _exit(w == sizeof(r) ? 0 : 1);
    }
    Result r{};
    ssize_t got = read(fds[0], &r, sizeof(r));
    close(fds[0]);
    close(fds[1]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != sizeof(r) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    std::printf("%-9zu %10.5f %10.5f %10.5f %12.1f %14.1f %9llu %9llu\n", n, r.min, r.median, r.max,
                r.graph_kb / 1024.0, r.compute_kb / 1024.0, r.heavy, r.layers);
    if (prev > 0) ratios.push_back(r.median / prev), min_ratios.push_back(r.min / prev_min);
    prev = r.median;
    prev_min = r.min;
  }
  std::printf(
      "time ratio per 10x nodes (10 = linear): median 10^4->10^5 %.2f, 10^5->10^6 %.2f;"
      " min %.2f, %.2f\n",
      ratios[0], ratios[1], min_ratios[0], min_ratios[1]);
  return 0;
}
