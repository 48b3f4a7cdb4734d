// parwidth-calibrate: the measuring half of `parwidth calibrate`, a program of
// its own so that nothing is ever measured inside a governed host process.
//
// For each operator size (a float32 matrix product of n x n, 2 n^3 FLOPs) and
// each OpenMP team size 1..max_team (team thread i pinned to the budget's
// core i, wrapping around, as governed teams are; the team sizes take turns
// batch by batch), prints the median time of one operator over several timed
// batches (the median of three passes over the sizes); then the single-core
// streaming bandwidth (from memory, and within one core's level-2 cache), an
// empty parallel region's time on each team size, the latency of waking a
// sleeping thread on another core, what signalling one costs the signaller,
// and what an OpenMP team's region pays for waking its workers when they
// sleep between regions. Output
// lines (the body of a calibration file, governor/machine_model.h):
//   size <flops> <seconds at 1 thread> ... <seconds at max_team threads>
//   bytes_per_s <bytes per second>
//   wake_s <seconds>
//   notify_s <seconds>
//   cache_bytes <bytes>, cache_bytes_per_s <bytes per second>   (where sysfs lists the L2)
//   region_s <seconds at 1 thread> ... <seconds at max_team threads>
//   team_wake_s <seconds>   (not printed on a budget of one core)
//   span_factor, span_region_s, socket_bytes_per_s   (FAR given: several sockets)
//   smt_gain                                         (SIBLING given)
// Where oneDNN is present (libdnnl.so.2, opened at run time: the helper
// needs nothing beyond libc and libgomp), the operator is oneDNN's own sgemm,
// the kernel frameworks run, on the same OpenMP runtime; otherwise a plain
// blocked loop, which calibrates the team's scaling and overhead but whose
// absolute rate is a lower bound.
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topology/topology.h"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// oneDNN's sgemm (row-major C = alpha A B + beta C), resolved at run time.
using SgemmFn = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t,
                        const float*, int64_t, float, float*, int64_t);

SgemmFn onednn_sgemm() {
  void* h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!h) return nullptr;
  return reinterpret_cast<SgemmFn>(dlsym(h, "dnnl_sgemm"));
}

void loop_matmul(const float* a, const float* b, float* c, int n, int team) {
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

void matmul(SgemmFn sgemm, const float* a, const float* b, float* c, int n, int team) {
  if (sgemm) {
    omp_set_num_threads(team);  // oneDNN's OpenMP threading takes the caller's team size
    sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  } else {
    loop_matmul(a, b, c, n, team);
  }
}

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Pins the threads of a team of `team` (this thread its master, thread 0) one
// per core, thread i to cores[i % cores.size()] (one CPU of each of the
// budget's cores, from the command line), as the governor pins a pool's team. Done before each
// batch: libgomp hands thread number i to the same kept worker from one region to the next, but a
// team of another size may have run on it in between.
void team_pin(int team, const std::vector<int>& cores) {
  if (cores.empty()) return;
#pragma omp parallel num_threads(team)
  pin_self(cores[static_cast<size_t>(omp_get_thread_num()) % cores.size()]);
}

// For one operator size, the time of one operator on each team size
// 1..max_team: the median over timed batches of at least ~3 ms (the median,
// not the fastest: an oversubscribed team's preemptions are part of what it
// costs). The team sizes take turns, one batch each per round, so that a
// burst of other load (a neighbour on a shared host) falls on all of them
// alike instead of on one: what the plan compares is their ratios.
std::vector<double> time_op(SgemmFn sgemm, int n, int max_team, double budget_s,
                            const std::vector<int>& cores) {
  std::vector<float> a(static_cast<size_t>(n) * n, 1.0f), b(a.size(), 0.5f), c(a.size(), 0.0f);
  const size_t teams = static_cast<size_t>(max_team);
  std::vector<int> batch(teams, 1);
  for (size_t k = 0; k < teams; ++k) {
    const int team = static_cast<int>(k) + 1;
    team_pin(team, cores);
    matmul(sgemm, a.data(), b.data(), c.data(), n, team);  // warm: pages, the team's threads
    for (;;) {                                             // a batch long enough to time
      const double t0 = now_s();
      for (int r = 0; r < batch[k]; ++r) matmul(sgemm, a.data(), b.data(), c.data(), n, team);
      if (now_s() - t0 >= 3e-3 || batch[k] >= (1 << 20)) break;
      batch[k] *= 2;
    }
  }
  std::vector<std::vector<double>> per(teams);
  const double until = now_s() + budget_s * max_team;
  for (int round = 0; round < 50 && (round < 5 || now_s() < until); ++round) {
    for (size_t k = 0; k < teams; ++k) {
      const int team = static_cast<int>(k) + 1;
      team_pin(team, cores);
      const double t0 = now_s();
      for (int r = 0; r < batch[k]; ++r) matmul(sgemm, a.data(), b.data(), c.data(), n, team);
      per[k].push_back((now_s() - t0) / batch[k]);
    }
  }
  if (c[0] == -1.0f) fputs("", stderr);  // keep the result alive
  std::vector<double> out(teams);
  for (size_t k = 0; k < teams; ++k) out[k] = median(per[k]);
  return out;
}

// What a memory copy moves per second (bytes read and written) between two
// buffers of `bytes` each: the fastest of `reps` timings, each of enough
// copies to last a millisecond.
double copy_bytes_per_s(size_t bytes, int reps) {
  const size_t n = std::max<size_t>(1, bytes / sizeof(float));
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  int batch = 1;
  double best = 1e30;
  for (int r = 0; r < reps;) {
    const double t0 = now_s();
    for (int k = 0; k < batch; ++k) {
      std::memcpy(dst.data(), src.data(), n * sizeof(float));
      src[static_cast<size_t>(k) % n] = dst[n - 1];
    }
    const double t = now_s() - t0;
    if (t < 1e-3 && batch < (1 << 20)) {
      batch *= 2;
      continue;
    }
    best = std::min(best, t / batch);
    ++r;
  }
  return 2.0 * static_cast<double>(n * sizeof(float)) / best;
}

void spin_for(double seconds) {
  const double until = now_s() + seconds;
  while (now_s() < until) {
  }
}

// What waking a sleeping thread costs, measured between two threads pinned
// to two cores of the budget (as a governed process's pools and team threads
// are), with the other core left idle between wake-ups as it is between
// operators. Waking a thread on another core takes an inter-processor
// interrupt (on a virtual machine an exit to the hypervisor), several times
// what a wake-up on the waker's own core costs, which is what unpinned
// threads mostly get.
//   wake_s:   half the median round trip of a turn passed between the two
//             threads, each sleeping on a condition variable in between;
//   notify_s: the median time the signalling thread spends in notify_one()
//             while the other one sleeps (the executor's cost of making work
//             ready for a sleeping pool).
void wake_seconds(const std::vector<int>& cores, double* wake_s, double* notify_s) {
  const bool pinned = cores.size() >= 2;
  const int a = pinned ? cores[0] : 0, b = pinned ? cores[1] : 0;
  cpu_set_t saved;
  const bool have_saved = sched_getaffinity(0, sizeof saved, &saved) == 0;
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;  // 0: main's, 1: the other's, 2: stop
  int sleeps = 0;
  std::thread other([&] {
    if (pinned) pin_self(b);
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {  // each pass ends in one sleep; a wake-up without a turn sleeps again
      if (turn == 2) return;
      if (turn == 1) {
        turn = 0;
        cv.notify_all();
      }
      ++sleeps;
      cv.wait(lock);
    }
  });
  if (pinned) pin_self(a);
  std::vector<double> trips, notifies;
  for (int r = 0; r < 300; ++r) {
    spin_for(1e-4);  // the other core idles, as it does between operators
    const double t0 = now_s();
    std::unique_lock<std::mutex> lock(mu);
    turn = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return turn == 0; });
    lock.unlock();
    trips.push_back(now_s() - t0);
  }
  for (int r = 0; r < 300; ++r) {
    spin_for(1e-4);
    int seen = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      seen = sleeps;
    }
    const double t0 = now_s();
    cv.notify_one();  // a spurious wake-up: the other finds nothing and sleeps again
    notifies.push_back(now_s() - t0);
    const double give_up = now_s() + 1.0;
    for (;;) {  // until it sleeps again
      std::lock_guard<std::mutex> lock(mu);
      if (sleeps > seen || now_s() > give_up) break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    turn = 2;
  }
  cv.notify_all();
  other.join();
  if (have_saved) sched_setaffinity(0, sizeof saved, &saved);
  *wake_s = std::max(1e-7, median(trips) / 2);
  *notify_s = std::max(1e-8, median(notifies));
}

// The median time of an empty parallel region of `team` threads (pinned to
// the budget's cores by team_pin), each started `gap_s` after the last one
// ended, the master spinning in between as a thread between operators does;
// `reps` regions, fewer where they pass `limit_s` (20 at least).
double region_seconds(int team, double gap_s, int reps = 400, double limit_s = 1.0) {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(reps));
  const double until = now_s() + limit_s;
  for (int r = 0; r < reps && (r < 20 || now_s() < until); ++r) {
    spin_for(gap_s);
    const double t0 = now_s();
#pragma omp parallel num_threads(team)
    {
      std::atomic_signal_fence(std::memory_order_seq_cst);  // a region the compiler keeps
    }
    v.push_back(now_s() - t0);
  }
  return median(v);
}

// Between regions: the executor's bookkeeping, a light operator.
constexpr double kGap = 2e-5;

// The fork and join of each team size 1..max_team, threads pinned as the
// governor pins them, measured in the order of team size: the fitting teams
// first, while the process manages no more OpenMP threads than CPUs and
// their workers spin between regions, as a governed plan within the cores
// keeps them; then the oversubscribed ones, whose workers sleep.
std::vector<double> region_row(int max_team, const std::vector<int>& cores) {
  std::vector<double> out;
  for (int team = 1; team <= max_team; ++team) {
    team_pin(team, cores);
    region_seconds(team, kGap, 5);  // the team's threads started and spinning
    // Up to 20 ms a size: a budget of 128 cores has 256 of them.
    out.push_back(std::max(1e-8, region_seconds(team, kGap, 200, 0.02)));
  }
  return out;
}

// What an operator on a team pays for waking the team's workers: a region of
// two threads (pinned to two cores) while another thread keeps an idle team of
// omp_get_num_procs() threads of its own, less the same region without it.
// With that team kept, the process manages more OpenMP threads than it has
// CPUs, and libgomp then spins only briefly before its workers sleep: the state
// of a governed host whose inter-op workers (or whose caller) keep teams, where
// every region wakes its workers through the kernel. Alone, the worker spins
// between regions and the region costs its fork and join only. -1 with fewer
// than two cores.
double team_wake_seconds(const std::vector<int>& cores) {
  if (cores.size() < 2) return -1;
  team_pin(2, cores);
  const double spinning = region_seconds(2, kGap);
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false, stop = false;
  std::thread keeper([&] {
    const int procs = std::max(2, omp_get_num_procs());
#pragma omp parallel num_threads(procs)
    { std::atomic_signal_fence(std::memory_order_seq_cst); }
    std::unique_lock<std::mutex> lock(mu);
    ready = true;
    cv.notify_all();
    cv.wait(lock, [&] { return stop; });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ready; });
  }
  spin_for(2e-3);  // the keeper's workers go to sleep
  team_pin(2, cores);
  const double sleeping = region_seconds(2, kGap);
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_all();
  keeper.join();
  return std::max(0.0, sleeping - spinning);
}

// What one socket's memory moves per second with every one of `cpus` (one
// CPU of each of its cores) copying its own buffers at once, each pinned:
// the roofline a team on that socket meets.
double socket_bytes_per_s(const std::vector<int>& cpus) {
  const size_t each = size_t{32} << 20;  // far beyond any cache, per thread
  const size_t n = each / sizeof(float);
  std::vector<std::vector<float>> src(cpus.size(), std::vector<float>(n, 1.0f));
  std::vector<std::vector<float>> dst(cpus.size(), std::vector<float>(n, 0.0f));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    std::vector<double> end(cpus.size(), 0);
    for (size_t i = 0; i < cpus.size(); ++i)
      threads.emplace_back([&, i] {
        pin_self(cpus[i]);
        ready.fetch_add(1);
        while (!go.load()) {
        }
        for (int k = 0; k < 4; ++k) std::memcpy(dst[i].data(), src[i].data(), each);
        end[i] = now_s();
      });
    while (ready.load() < static_cast<int>(cpus.size())) {
    }
    const double t0 = now_s();
    go.store(true);
    for (std::thread& t : threads) t.join();
    const double t = *std::max_element(end.begin(), end.end()) - t0;
    best = std::max(best, 2.0 * 4 * static_cast<double>(each) * cpus.size() / t);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  // CORES: one CPU of each physical core of the budget, as `parwidth calibrate`
  // has planned it (topology/'s budget: affinity, cgroup, share), in its order.
  std::vector<int> cores;
  std::string err;
  if (argc < 3 || pw::topo::cpulist_parse(argv[2], &cores, &err) != pw::topo::Status::kOk) {
    fputs("usage: parwidth-calibrate MAX_TEAM CORES [SECONDS_PER_CELL [SOCKET0 FAR SIBLING]]\n",
          stderr);
    return 2;
  }
  const int max_team = std::atoi(argv[1]);
  const double cell = argc > 3 ? std::atof(argv[3]) : 0.03;
  // Sockets and SMT, where `parwidth calibrate` found them: the first
  // socket's cores (one CPU each), a CPU of another socket, a sibling of
  // cores[0]; "-" where there is none.
  std::vector<int> socket0;
  if (argc > 4 && std::string(argv[4]) != "-" &&
      pw::topo::cpulist_parse(argv[4], &socket0, &err) != pw::topo::Status::kOk)
    return 2;
  const int far = argc > 5 && std::string(argv[5]) != "-" ? std::atoi(argv[5]) : -1;
  const int sibling = argc > 6 && std::string(argv[6]) != "-" ? std::atoi(argv[6]) : -1;
  if (max_team < 1 || max_team > 8192 || !(cell > 0 && cell < 10)) return 2;
  omp_set_dynamic(0);
  // Before the first parallel region: under OMP_PROC_BIND (the user's, should
  // `parwidth calibrate` not have turned it off) the first region binds this
  // thread to one place, and the wake-up needs two.
  double wake_s = 0, notify_s = 0;
  wake_seconds(cores, &wake_s, &notify_s);
  const std::vector<double> region = region_row(max_team, cores);
  const SgemmFn sgemm = onednn_sgemm();
  // Three passes over the sizes, each cell the median of its passes: a burst
  // of the host's load that outlasts one size's rounds (a shared host that
  // takes a vCPU away stalls every team of two or more at its barriers, for
  // a tenth of a second or more) lands in one pass, not in the result.
  constexpr int kPasses = 3;
  const std::vector<int> sizes = {16, 32, 64, 128, 256, 384};
  std::vector<std::vector<std::vector<double>>> cells(sizes.size());  // [size][pass][team]
  for (int pass = 0; pass < kPasses; ++pass)
    for (size_t i = 0; i < sizes.size(); ++i)
      cells[i].push_back(time_op(sgemm, sizes[i], max_team, cell, cores));
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double n = sizes[i];
    printf("size %.6g", 2.0 * n * n * n);
    for (size_t k = 0; k < static_cast<size_t>(max_team); ++k) {
      std::vector<double> v;
      v.reserve(kPasses);
      for (const std::vector<double>& p : cells[i]) v.push_back(p[k]);
      printf(" %.6g", median(v));
    }
    printf("\n");
  }
  fflush(stdout);
  printf("bytes_per_s %.6g\n", copy_bytes_per_s(size_t{64} << 20, 5));  // from memory
  int64_t l2 = 0;
  if (!cores.empty() &&
      pw::topo::l2_cache_per_core(pw::topo::kSysfsCpuRoot, cores[0], &l2, nullptr) ==
          pw::topo::Status::kOk &&
      l2 >= 64 << 10) {
    // Within one core's L2: two buffers of a quarter of it each.
    printf("cache_bytes %lld\ncache_bytes_per_s %.6g\n", static_cast<long long>(l2),
           copy_bytes_per_s(static_cast<size_t>(l2 / 4), 12));
  }
  printf("region_s");
  for (double v : region) printf(" %.6g", v);
  printf("\n");
  printf("wake_s %.6g\n", wake_s);
  printf("notify_s %.6g\n", notify_s);
  const double team_wake_s = team_wake_seconds(cores);
  if (team_wake_s >= 0) printf("team_wake_s %.6g\n", std::max(1e-8, team_wake_s));
  // A team of two across two sockets against two on one socket: the matrix
  // product of the largest size, and an empty region's fork and join.
  constexpr int kPairN = 384;
  if (far >= 0 && cores.size() >= 2) {
    const std::vector<int> near = {cores[0], cores[1]}, across = {cores[0], far};
    std::vector<double> tn, ta;
    for (int pass = 0; pass < kPasses; ++pass) {
      tn.push_back(time_op(sgemm, kPairN, 2, cell, near)[1]);
      ta.push_back(time_op(sgemm, kPairN, 2, cell, across)[1]);
    }
    team_pin(2, near);
    region_seconds(2, kGap, 5);
    const double rn = region_seconds(2, kGap);
    team_pin(2, across);
    region_seconds(2, kGap, 5);
    const double ra = region_seconds(2, kGap);
    printf("span_factor %.6g\n", std::clamp(median(ta) / median(tn), 1.0, 4.0));
    printf("span_region_s %.6g\n", std::clamp(ra - rn, 0.0, 1e-2));
  }
  if (far >= 0 && !socket0.empty())
    printf("socket_bytes_per_s %.6g\n", socket_bytes_per_s(socket0));
  // One core's two siblings against the core alone.
  if (sibling >= 0 && !cores.empty()) {
    const std::vector<int> pair = {cores[0], sibling};
    std::vector<double> t1, t2;
    for (int pass = 0; pass < kPasses; ++pass) {
      const std::vector<double> t = time_op(sgemm, kPairN, 2, cell, pair);
      t1.push_back(t[0]);
      t2.push_back(t[1]);
    }
    printf("smt_gain %.6g\n", std::clamp(median(t1) / median(t2) - 1, 0.0, 1.0));
  }
  return 0;
}
