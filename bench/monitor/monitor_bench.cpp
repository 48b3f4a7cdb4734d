// bench/monitor: the sampler's cost at its default period, measured side by side in one run.
//
//   bench_monitor [--period-ms N] [--repeats N] [--seconds S]
//
// 1. /proc read cost: one proc_read_threads() over N threads: schedstat only (every sample) and
//    with detail (cpu + affinity, every detail_every-th sample).
// 2. Sampler CPU time per second of wall time, at the period, with N idle threads in the process.
// 3. A compute-bound loop on every allowed CPU, sampler off vs on, alternated, min/median/max.
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
  std::printf("\n== sampler CPU time at a %u ms period, over %.1f s (PAPI as installed)\n",
              period_ms, seconds);
  std::printf("%8s %9s %16s %14s %s\n", "threads", "samples", "CPU ms per s", "% of one CPU",
              "backend");
  for (int n : {1, 8, 64, 256}) {
    Idle idle(n - 1);
    SamplerCost c;
    Sampler s;
    SamplerOptions o;
    o.period_ms = period_ms;
    if (s.start(o, nullptr, on_sample, &c) != Status::kOk) {
      std::printf("sampler did not start\n");
      return;
    }
    double t0 = now_s();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    double wall = now_s() - t0;
    SamplerInfo i;
    s.info(&i);
    s.stop();
    double ms_per_s = static_cast<double>(c.self_ns.load()) / 1e6 / wall;
    std::printf("%8d %9lu %16.3f %14.4f %s (%s)\n", n, static_cast<unsigned long>(c.samples.load()),
                ms_per_s, ms_per_s / 10.0, i.backend, i.papi_reason);
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
      "\n== compute-bound loop on %d threads (= allowed CPUs), sampler off vs on at %u ms, "
      "%d repeats alternated\n",
      cpus, period_ms, repeats);
  std::vector<double> off, on, ratio;
  for (int r = 0; r < repeats; ++r) {
    double a = compute(cpus, iters);
    SamplerCost c;
    Sampler s;
    SamplerOptions o;
    o.period_ms = period_ms;
    s.start(o, nullptr, on_sample, &c);
    double b = compute(cpus, iters);
    s.stop();
    off.push_back(a);
    on.push_back(b);
    ratio.push_back(b / a);
  }
  Stats so = stats(off), sn = stats(on), sr = stats(ratio);
  std::printf("%-10s %10s %10s %10s\n", "", "min", "median", "max");
  std::printf("%-10s %9.3fs %9.3fs %9.3fs\n", "off", so.min, so.med, so.max);
  std::printf("%-10s %9.3fs %9.3fs %9.3fs\n", "on", sn.min, sn.med, sn.max);
  std::printf("%-10s %10.4f %10.4f %10.4f\n", "on/off", sn.min / so.min, sn.med / so.med,
              sn.max / so.max);
  std::printf("%-10s %10.4f %10.4f %10.4f   (per-pair ratios)\n", "pair", sr.min, sr.med, sr.max);
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
