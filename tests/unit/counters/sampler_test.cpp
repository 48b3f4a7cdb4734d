// Sampler: real threads in this process, the detector on top, PAPI on, off and broken.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "counters/counters.h"
#include "governor/oversub.h"
#include "tests/unit/counters/test_util.h"

namespace pw::counters {
namespace {

using testing::allowed_cpus;
using testing::BusyThreads;
using testing::read_line;
using testing::threads_named;

// What the preload does with each sample: feed the detector, remember what happened.
struct Monitor {
  explicit Monitor(int omp_cap = 8) : det(config(omp_cap)) {}
  static gov::OversubConfig config(int omp_cap) {
    gov::OversubConfig c;
    c.budget_cpus = allowed_cpus();
    c.omp_cap = omp_cap;
    return c;
  }
  static void on_sample(const Sample& s, void* self) {
    auto* m = static_cast<Monitor*>(self);
    gov::OversubSample o;
    o.t_ns = s.t_ns;
    o.dt_ns = s.dt_ns;
    o.runq_wait_ns = s.runq_wait_ns;
    o.invol_switches = s.invol_switches;
    o.threads = s.threads;
    gov::OversubAction a[4];
    m->det.step(o, a, 4);
    if (m->det.oversubscribed() && m->flagged_at == 0) m->flagged_at = s.seq;
    m->max_threads = s.threads > m->max_threads ? s.threads : m->max_threads;
    m->cpu_ns += s.cpu_time_ns;
    m->per_thread_ok = m->per_thread_ok && s.n_thread > 0 && s.thread != nullptr;
    if (s.detail) {
      ++m->detail_samples;
      for (size_t i = 0; i < s.n_thread; ++i) {
        m->per_thread_ok = m->per_thread_ok && s.thread[i].have_allowed && s.thread[i].cpu >= 0;
      }
    }
    m->papi_ctx += s.papi.context_switches;
    m->samples.store(s.seq);
  }
  // Waits (generously) until `n` samples were taken or the detector flagged.
  void wait_for(uint64_t n, bool until_flagged) {
    for (int i = 0; i < 3000; ++i) {
      if (samples.load() >= n || (until_flagged && flagged_at.load() != 0)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  gov::OversubDetector det;
  std::atomic<uint64_t> flagged_at{0};
  std::atomic<uint64_t> samples{0};
  uint32_t max_threads = 0;
  uint64_t cpu_ns = 0, papi_ctx = 0, detail_samples = 0;
  bool per_thread_ok = true;
};

SamplerOptions period(unsigned ms) {
  SamplerOptions o;
  o.period_ms = ms;
  return o;
}

void wait_ready(const Sampler& s) {
  SamplerInfo i;
  for (int k = 0; k < 1000 && s.info(&i) == Status::kPending; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Busy threads well beyond the CPUs are flagged within 1 s of samples at 100 ms, and the OpenMP
// cap comes down; whichever way PAPI turns out.
void expect_overload_flagged(SamplerOptions o) {
  int busy = 4 * allowed_cpus();
  if (busy < 8) busy = 8;
  BusyThreads load(busy);
  Monitor m;
  Sampler s;
  ASSERT_EQ(s.start(o, nullptr, &Monitor::on_sample, &m), Status::kOk);
  m.wait_for(10, true);
  ASSERT_EQ(s.stop(), Status::kOk);
  ASSERT_NE(m.flagged_at.load(), 0u) << "not flagged in " << m.samples.load() << " samples";
  EXPECT_LE(m.flagged_at.load(), 10u);  // 10 samples x 100 ms
  EXPECT_LT(m.det.omp_cap(), 8);
  EXPECT_GE(m.det.summary().max_wait_ratio, m.det.config().enter_wait_ratio);
  EXPECT_GE(m.max_threads, static_cast<uint32_t>(busy));
  EXPECT_TRUE(m.per_thread_ok);
}

TEST(Sampler, DetailSamplesCarryEveryThreadsCpuAndAffinity) {
  BusyThreads load(3);
  Monitor m;
  Sampler s;
  SamplerOptions o = period(20);
  o.detail_every = 2;
  ASSERT_EQ(s.start(o, nullptr, &Monitor::on_sample, &m), Status::kOk);
  m.wait_for(6, false);
  ASSERT_EQ(s.stop(), Status::kOk);
  EXPECT_GE(m.detail_samples, 3u);
  EXPECT_TRUE(m.per_thread_ok);
}

TEST(Sampler, OverloadIsFlaggedWithPapiIfItWorks) {
  expect_overload_flagged(period(100));
}

TEST(Sampler, OverloadIsFlaggedWithProcOnly) {
  SamplerOptions o = period(100);
  o.use_papi = false;
  expect_overload_flagged(o);
}

TEST(Sampler, OverloadIsFlaggedWhenLibpapiIsMissing) {
  SamplerOptions o = period(100);
  o.papi_library = "libpapi-not-installed.so.0";
  expect_overload_flagged(o);
}

TEST(Sampler, WithinBudgetIsNeverFlagged) {
  for (int run = 0; run < 20; ++run) {
    BusyThreads load(1);
    Monitor m;
    Sampler s;
    SamplerOptions o = period(40);
    o.use_papi = run % 2 == 0;
    ASSERT_EQ(s.start(o, nullptr, &Monitor::on_sample, &m), Status::kOk);
    m.wait_for(6, false);
    ASSERT_EQ(s.stop(), Status::kOk);
    EXPECT_EQ(m.flagged_at.load(), 0u)
        << "run " << run << ", max wait ratio " << m.det.summary().max_wait_ratio;
    EXPECT_GE(m.samples.load(), 6u);
    EXPECT_GT(m.cpu_ns, 0u);
  }
}

TEST(Sampler, InfoSaysWhichBackendAndWhy) {
  Monitor m;
  Sampler s;
  SamplerOptions o = period(50);
  o.use_papi = false;
  ASSERT_EQ(s.start(o, nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  SamplerInfo i;
  ASSERT_EQ(s.info(&i), Status::kOk);
  EXPECT_TRUE(i.running);
  EXPECT_FALSE(i.papi_used);
  EXPECT_STREQ(i.backend, "proc");
  EXPECT_STREQ(i.papi_reason, "disabled by option");
  EXPECT_EQ(i.period_ms, 50u);
  EXPECT_GT(i.sampler_tid, 0);
  ASSERT_EQ(s.stop(), Status::kOk);

  o.use_papi = true;
  o.papi_library = "libpapi-not-installed.so.0";
  ASSERT_EQ(s.start(o, nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  ASSERT_EQ(s.info(&i), Status::kOk);
  EXPECT_STREQ(i.backend, "proc");
  EXPECT_NE(std::string(i.papi_reason).find("dlopen"), std::string::npos) << i.papi_reason;
  ASSERT_EQ(s.stop(), Status::kOk);

  // The installed libpapi: either it counts (papi+proc) or it says why not.
  o.papi_library = nullptr;
  ASSERT_EQ(s.start(o, nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  ASSERT_EQ(s.info(&i), Status::kOk);
  EXPECT_STREQ(i.backend, i.papi_used ? "papi+proc" : "proc");
  EXPECT_GT(strlen(i.papi_reason), 0u);
  RecordProperty("papi", i.papi_reason);
  ASSERT_EQ(s.stop(), Status::kOk);
}

// PAPI made unavailable through its own environment: a fresh process (this binary, re-executed)
// with PAPI_DISABLE_COMPONENTS=perf_event, where PAPI is initialised for the first time.
TEST(Sampler, PapiDisabledThroughItsEnvironmentFallsBackToProc) {
  if (getenv("PW_COUNTERS_CHILD")) {
    expect_overload_flagged(period(100));
    Sampler s;
    Monitor m;
    ASSERT_EQ(s.start(period(50), nullptr, &Monitor::on_sample, &m), Status::kOk);
    wait_ready(s);
    SamplerInfo i;
    s.info(&i);
    EXPECT_FALSE(i.papi_used);
    EXPECT_NE(std::string(i.papi_reason).find("disabled"), std::string::npos) << i.papi_reason;
    s.stop();
    return;
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("PW_COUNTERS_CHILD", "1", 1);
    setenv("PAPI_DISABLE_COMPONENTS", "perf_event", 1);
    execl("/proc/self/exe", "counters_test",
          "--gtest_filter=Sampler.PapiDisabledThroughItsEnvironmentFallsBackToProc", nullptr);
    _exit(127);
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

TEST(Sampler, PapiInitTouchesNoSignalHandler) {
  struct sigaction before[65], after[65];
  bool valid[65];
  for (int sig = 1; sig < 65; ++sig) valid[sig] = sigaction(sig, nullptr, &before[sig]) == 0;
  Monitor m;
  Sampler s;
  ASSERT_EQ(s.start(period(50), nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  m.wait_for(2, false);
  ASSERT_EQ(s.stop(), Status::kOk);
  for (int sig = 1; sig < 65; ++sig) {
    if (!valid[sig]) continue;  // glibc's internal signals
    ASSERT_EQ(sigaction(sig, nullptr, &after[sig]), 0);
    EXPECT_EQ(before[sig].sa_handler, after[sig].sa_handler) << "signal " << sig;
  }
}

TEST(Sampler, ThreadIsNamedBlocksSignalsAndIsGoneAfterStop) {
  EXPECT_EQ(threads_named("parwidth-mon"), 0);
  Monitor m;
  Sampler s;
  ASSERT_EQ(s.start(period(50), nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  SamplerInfo i;
  s.info(&i);
  std::string task = "/proc/self/task/" + std::to_string(i.sampler_tid);
  EXPECT_EQ(read_line(task + "/comm"), "parwidth-mon");
  EXPECT_EQ(threads_named("parwidth-mon"), 1);
  // SigBlk: every signal a host could handle is blocked on the sampler thread.
  std::ifstream f(task + "/status");
  unsigned long long blk = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("SigBlk:", 0) == 0) blk = std::stoull(line.substr(7), nullptr, 16);
  }
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPROF, SIGALRM, SIGUSR1, SIGUSR2, SIGRTMIN + 2}) {
    EXPECT_TRUE(blk & (1ull << (sig - 1))) << "signal " << sig << " not blocked";
  }
  // The caller's own mask is left as it was.
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  EXPECT_FALSE(sigismember(&now, SIGINT));
  ASSERT_EQ(s.stop(), Status::kOk);
  EXPECT_EQ(threads_named("parwidth-mon"), 0);
}

TEST(Sampler, StopIsPromptEvenWithALongPeriod) {
  Monitor m;
  Sampler s;
  ASSERT_EQ(s.start(period(20000), nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(s.stop(), Status::kOk);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // period is 20 s
  EXPECT_EQ(m.samples.load(), 0u);
  EXPECT_EQ(threads_named("parwidth-mon"), 0);
}

std::atomic<int> g_creates{0};
int counting_create(pthread_t* t, const pthread_attr_t* a, void* (*fn)(void*), void* arg) {
  ++g_creates;
  return pthread_create(t, a, fn, arg);
}
int failing_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) {
  return EAGAIN;
}

TEST(Sampler, UsesTheInjectedCreateAndReportsMisuse) {
  Monitor m;
  Sampler s;
  EXPECT_EQ(s.stop(), Status::kUnsupported);
  EXPECT_EQ(s.start(period(50), counting_create, nullptr, &m), Status::kError);
  ASSERT_EQ(s.start(period(50), counting_create, &Monitor::on_sample, &m), Status::kOk);
  EXPECT_EQ(g_creates.load(), 1);
  EXPECT_EQ(s.start(period(50), counting_create, &Monitor::on_sample, &m), Status::kBusy);
  ASSERT_EQ(s.stop(), Status::kOk);
  EXPECT_EQ(s.start(period(50), failing_create, &Monitor::on_sample, &m), Status::kError);
  SamplerInfo i;
  EXPECT_EQ(s.info(&i), Status::kOk);
  EXPECT_FALSE(i.running);
  EXPECT_EQ(threads_named("parwidth-mon"), 0);
}

TEST(Sampler, ForkedChildResetsAndCanStartAgain) {
  Monitor m;
  Sampler s;
  ASSERT_EQ(s.start(period(30), nullptr, &Monitor::on_sample, &m), Status::kOk);
  wait_ready(s);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // In the child: no sampler thread, state dropped without joining, a restart works.
    s.reset_after_fork();
    SamplerInfo i;
    int bad = 0;
    bad |= (s.info(&i) != Status::kOk || i.running) << 0;
    bad |= (threads_named("parwidth-mon") != 0) << 1;
    Monitor mc;
    bad |= (s.start(period(30), nullptr, &Monitor::on_sample, &mc) != Status::kOk) << 2;
    mc.wait_for(2, false);
    wait_ready(s);
    s.info(&i);
    bad |= (mc.samples.load() < 2) << 3;
    bad |= (i.papi_used || !strstr(i.papi_reason, "forked")) << 4;
    bad |= (s.stop() != Status::kOk) << 5;
    _exit(bad);
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
  m.wait_for(2, false);
  EXPECT_EQ(s.stop(), Status::kOk);
  EXPECT_GE(m.samples.load(), 2u);
}

}  // namespace
}  // namespace pw::counters
