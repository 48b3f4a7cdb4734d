// parwidth-calibrate: the measuring half of `parwidth calibrate`, a program of
// its own so that nothing is ever measured inside a governed host process.
//
// For each operator size (a float32 matrix product of n x n, 2 n^3 FLOPs) and
// each OpenMP team size 1..max_team, prints the fastest of several timed runs
// of one operator; then the single-core streaming bandwidth. Output lines:
//   size <flops> <seconds at 1 thread> ... <seconds at max_team threads>
//   bytes_per_s <bytes per second>
// The kernel is a plain blocked loop, not a oneDNN primitive: it calibrates
// the team's scaling and overhead; the absolute rate is a lower bound.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void matmul(const float* a, const float* b, float* c, int n, int team) {
#pragma omp parallel for num_threads(team) schedule(static)
  for (int i = 0; i < n; ++i) {
    float* ci = c + static_cast<size_t>(i) * n;
    for (int k = 0; k < n; ++k) {
      const float aik = a[static_cast<size_t>(i) * n + k];
      const float* bk = b + static_cast<size_t>(k) * n;
      for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
    }
  }
}

// The fastest run of one operator, timed over batches of at least ~3 ms.
double time_op(int n, int team, double budget_s) {
  std::vector<float> a(static_cast<size_t>(n) * n, 1.0f), b(a.size(), 0.5f), c(a.size(), 0.0f);
  matmul(a.data(), b.data(), c.data(), n, team);  // warm: pages, the team's threads
  double best = 1e30;
  const double until = now_s() + budget_s;
  int batch = 1;
  for (int round = 0; round < 50 && (round < 3 || now_s() < until); ++round) {
    const double t0 = now_s();
    for (int r = 0; r < batch; ++r) matmul(a.data(), b.data(), c.data(), n, team);
    const double per = (now_s() - t0) / batch;
    best = std::min(best, per);
    if (per * batch < 3e-3) batch *= 2;
  }
  if (c[0] == -1.0f) fputs("", stderr);  // keep the result alive
  return best;
}

double stream_bytes_per_s() {
  const size_t n = 16u << 20;  // 64 MiB of floats, twice
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const double t0 = now_s();
    std::memcpy(dst.data(), src.data(), n * sizeof(float));
    best = std::min(best, now_s() - t0);
    src[r] = dst[n - 1 - r];
  }
  return 2.0 * n * sizeof(float) / best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fputs("usage: parwidth-calibrate MAX_TEAM [SECONDS_PER_CELL]\n", stderr);
    return 2;
  }
  const int max_team = std::atoi(argv[1]);
  const double cell = argc > 2 ? std::atof(argv[2]) : 0.03;
  if (max_team < 1 || max_team > 8192 || !(cell > 0 && cell < 10)) return 2;
  omp_set_dynamic(0);
  for (int n : {16, 32, 64, 128, 256, 384}) {
    printf("size %.6g", 2.0 * n * n * n);
    for (int t = 1; t <= max_team; ++t) printf(" %.6g", time_op(n, t, cell));
    printf("\n");
    fflush(stdout);
  }
  printf("bytes_per_s %.6g\n", stream_bytes_per_s());
  return 0;
}
