// An OpenMP program that oversubscribes on purpose (active wait policy, nested teams) is flagged.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "counters/counters.h"
#include "governor/oversub.h"
#include "tests/unit/counters/test_util.h"

namespace pw::counters {
namespace {

struct Flag {
  gov::OversubDetector det;
  std::atomic<uint64_t> flagged_at{0}, samples{0};
  static void on_sample(const Sample& s, void* p) {
    auto* f = static_cast<Flag*>(p);
    gov::OversubSample o;
    o.t_ns = s.t_ns;
    o.dt_ns = s.dt_ns;
    o.runq_wait_ns = s.runq_wait_ns;
    o.run_ns = s.cpu_time_ns;
    o.invol_switches = s.invol_switches;
    o.threads = s.threads;
    gov::OversubAction a[4];
    f->det.step(o, a, 4);
    if (f->det.oversubscribed() && !f->flagged_at) f->flagged_at = s.seq;
    f->samples = s.seq;
  }
};

// Nested teams of `outer` x `inner` threads doing short chunks between barriers, so the active
// wait policy spins at every barrier: about outer*inner threads want a CPU all the time.
void nested_work(int outer, int inner, const std::atomic<bool>& stop) {
#pragma omp parallel num_threads(outer)
  {
    while (!stop.load(std::memory_order_relaxed)) {
#pragma omp parallel num_threads(inner)
      {
        volatile double x = 1;
        for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
      }
    }
  }
}

// libgomp reads OMP_* when it loads: the real check runs in this binary re-executed with them.
TEST(OpenMp, NestedActiveWaitTeamsAreFlaggedWithinOneSecond) {
  if (!getenv("PW_OMP_CHILD")) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setenv("PW_OMP_CHILD", "1", 1);
      setenv("OMP_WAIT_POLICY", "active", 1);
      setenv("OMP_MAX_ACTIVE_LEVELS", "2", 1);
      execl("/proc/self/exe", "counters_omp_test", "--gtest_filter=OpenMp.*", nullptr);
      _exit(127);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0);
    return;
  }
  ASSERT_EQ(omp_get_max_active_levels(), 2);
  gov::OversubConfig c;
  c.budget_cpus = testing::allowed_cpus();
  c.omp_cap = 4;
  Flag f{gov::OversubDetector(c)};
  Sampler s;
  SamplerOptions o;
  o.period_ms = 100;
  std::atomic<bool> stop{false};
  int outer = 2 * testing::allowed_cpus();
  std::thread work([&] { nested_work(outer, 4, stop); });
  ASSERT_EQ(s.start(o, nullptr, &Flag::on_sample, &f), Status::kOk);
  for (int i = 0; i < 500 && !f.flagged_at && f.samples < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  work.join();
  ASSERT_EQ(s.stop(), Status::kOk);
  ASSERT_NE(f.flagged_at.load(), 0u) << "max wait ratio " << f.det.summary().max_wait_ratio;
  EXPECT_LE(f.flagged_at.load(), 10u);
  EXPECT_LT(f.det.omp_cap(), 4);
  EXPECT_GE(f.det.omp_cap(), 1);
}

}  // namespace
}  // namespace pw::counters
