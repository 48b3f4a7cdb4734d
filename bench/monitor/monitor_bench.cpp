// bench/monitor: the sampler's cost at its default period, measured side by side in one run.
//
//   bench_monitor [--period-ms N] [--repeats N] [--seconds S]
//
// 1. /proc read cost: one proc_read_threads() over N threads: schedstat only (every sample) and
//    with detail (cpu + affinity, every detail_every-th sample).
// 2. Sampler CPU time per second of wall time, at the period, with N idle threads in the process,
//    PAPI counters on and /proc only side by side (the sampler starts first, as in the preload,
//    so that the counters are opened while the process is single-threaded), and what opening
//    the counters cost the caller (the first time: libpapi loaded and initialised).
// 3. A compute-bound loop on every allowed CPU: sampler off, on with /proc only, on with PAPI,
//    alternated, min/median/max (the inherited counters' cost falls on the counted threads).
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "counters/counters.h"

namespace {

using pw::counters::ProcReadOptions;
using pw::counters::Sample;
using pw::counters::Sampler;
using pw::counters::SamplerInfo;
using pw::counters::SamplerOptions;
using pw::counters::Status;
using pw::counters::ThreadStat;

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// n threads that sleep until destroyed: the sampler reads them every period.
class Idle {
 public:
  explicit Idle(int n) {
    for (int i = 0; i < n; ++i) {
      t_.emplace_back([this] {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [this] { return done_; });
      });
    }
  }
  ~Idle() {
    {
      std::lock_guard<std::mutex> l(m_);
      done_ = true;
    }
    cv_.notify_all();
    for (auto& t : t_) t.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::vector<std::thread> t_;
};

struct Stats {
  double min, med, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

struct SamplerCost {
  std::atomic<uint64_t> self_ns{0}, samples{0};
};
void on_sample(const Sample& s, void* p) {
  auto* c = static_cast<SamplerCost*>(p);
  c->self_ns += s.sampler_cpu_ns;
  c->samples = s.seq;
}

void bench_proc_read() {
  std::printf("\n== /proc read: one proc_read_threads() call (min of 50), per process size\n");
  std::printf("%8s %14s %14s %16s\n", "threads", "detail us", "schedstat us", "schedstat us/thr");
  std::vector<ThreadStat> buf(1100);
  for (int n : {1, 8, 64, 256, 1000}) {
    Idle idle(n - 1);
    double best[2] = {1e9, 1e9};
    for (int detail = 0; detail < 2; ++detail) {
      ProcReadOptions o;
      o.detail = detail == 1;
      for (int r = 0; r < 50; ++r) {
        size_t got = 0, total = 0;
        double t0 = now_s();
        proc_read_threads(o, buf.data(), buf.size(), &got, &total);
        best[detail] = std::min(best[detail], now_s() - t0);
      }
    }
    std::printf("%8d %14.1f %14.1f %16.2f\n", n, best[1] * 1e6, best[0] * 1e6, best[0] * 1e6 / n);
  }
}

void bench_sampler_cpu(unsigned period_ms, double seconds) {
  std::printf("\n== sampler CPU time at a %u ms period, over %.1f s, PAPI on vs /proc only\n",
              period_ms, seconds);
  std::printf("%8s %-10s %9s %14s %14s %12s  %s\n", "threads", "backend", "samples", "CPU ms per s",
              "% of one CPU", "open ms", "PAPI");
  for (int n : {1, 8, 64, 256}) {
    for (bool papi : {true, false}) {
      SamplerCost c;
      Sampler s;
      SamplerOptions o;
      o.period_ms = period_ms;
      o.use_papi = papi;
      if (s.start(o, nullptr, on_sample, &c) != Status::kOk) {
        std::printf("sampler did not start\n");
        return;
      }
      Idle idle(n - 1);
      double t0 = now_s();
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      double wall = now_s() - t0;
      SamplerInfo i;
      s.info(&i);
      s.stop();
      double ms_per_s = static_cast<double>(c.self_ns.load()) / 1e6 / wall;
      std::printf("%8d %-10s %9lu %14.3f %14.4f %12.3f  %s\n", n, i.backend,
                  static_cast<unsigned long>(c.samples.load()), ms_per_s, ms_per_s / 10.0,
                  static_cast<double>(i.papi_open_ns) / 1e6, i.papi_reason);
    }
  }
}

// Fixed work split over every allowed CPU; returns seconds.
double compute(int threads, uint64_t iters) {
  std::vector<std::thread> t;
  std::atomic<uint64_t> sink{0};
  double t0 = now_s();
  for (int k = 0; k < threads; ++k) {
    t.emplace_back([&, k] {
      uint64_t x = 88172645463325252ull + static_cast<uint64_t>(k);
      for (uint64_t i = 0; i < iters; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
      }
      sink += x;
    });
  }
  for (auto& th : t) th.join();
  return now_s() - t0;
}

void bench_compute(unsigned period_ms, int repeats) {
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  // Size the work to 0.4-0.8 s per run here.
  uint64_t iters = 10000000;
  while (compute(cpus, iters) < 0.4) iters *= 2;
  std::printf(
      "\n== compute-bound loop on %d threads (= allowed CPUs), sampler off / on with /proc only / "
      "on with PAPI, at %u ms, %d repeats alternated\n",
      cpus, period_ms, repeats);
  std::vector<double> t[3], ratio[2];
  const char* names[3] = {"off", "proc", "papi"};
  for (int r = 0; r < repeats; ++r) {
    double v[3];
    v[0] = compute(cpus, iters);
    for (int k = 1; k < 3; ++k) {
      SamplerCost c;
      Sampler s;
      SamplerOptions o;
      o.period_ms = period_ms;
      o.use_papi = k == 2;
      s.start(o, nullptr, on_sample, &c);
      v[k] = compute(cpus, iters);
      s.stop();
    }
    for (int k = 0; k < 3; ++k) t[k].push_back(v[k]);
    ratio[0].push_back(v[1] / v[0]);
    ratio[1].push_back(v[2] / v[0]);
  }
  std::printf("%-12s %10s %10s %10s\n", "", "min", "median", "max");
  for (int k = 0; k < 3; ++k) {
    Stats st = stats(t[k]);
    std::printf("%-12s %9.3fs %9.3fs %9.3fs\n", names[k], st.min, st.med, st.max);
  }
  for (int k = 0; k < 2; ++k) {
    Stats sr = stats(ratio[k]);
    std::printf("%-12s %10.4f %10.4f %10.4f   (per-run ratios)\n", k ? "papi/off" : "proc/off",
                sr.min, sr.med, sr.max);
  }
}

}  // namespace

int main(int argc, char** argv) {
  unsigned period_ms = SamplerOptions{}.period_ms;
  int repeats = 9;
  double seconds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char* v = argv[i + 1];
    if (!std::strcmp(argv[i], "--period-ms")) period_ms = static_cast<unsigned>(std::atoi(v));
    if (!std::strcmp(argv[i], "--repeats")) repeats = std::max(1, std::atoi(v));
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(v);
  }
  bench_proc_read();
  bench_sampler_cpu(period_ms, seconds);
  bench_compute(period_ms, repeats);
  return 0;
}
