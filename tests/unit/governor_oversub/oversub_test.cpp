// Oversubscription detector: hysteresis and reactions on synthetic sample sequences.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "governor/oversub.h"

namespace pw::gov {
namespace {

constexpr uint64_t kPeriod = 100000000;  // 100 ms

// A sample in which `waiting` threads, on average, waited for a CPU the whole interval while
// `running` of them kept 2 CPUs busy: every waiting thread is this process's own.
OversubSample sample(int i, double waiting, uint64_t invol = 0, uint32_t strays = 0,
                     double running = 2) {
  OversubSample s;
  s.t_ns = static_cast<uint64_t>(i + 1) * kPeriod;
  s.dt_ns = kPeriod;
  s.runq_wait_ns = static_cast<uint64_t>(waiting * kPeriod);
  s.run_ns = static_cast<uint64_t>(running * kPeriod);
  s.invol_switches = invol;
  s.threads = 8;
  s.strays = strays;
  return s;
}

// The same, with the counters' task clock at task_clock_cpus: beyond the threads' run time it
// is child processes' CPU time.
OversubSample counted(int i, double waiting, double running, double task_clock_cpus) {
  OversubSample s = sample(i, waiting, 0, 0, running);
  s.have_counters = true;
  s.task_clock_ns = static_cast<uint64_t>(task_clock_cpus * kPeriod);
  return s;
}

struct Trace {
  std::vector<OversubAction> actions;
  int first_flagged = -1;
};

Trace feed(OversubDetector& d, const std::vector<OversubSample>& ss) {
  Trace r;
  for (size_t i = 0; i < ss.size(); ++i) {
    OversubAction a[4];
    size_t n = d.step(ss[i], a, 4);
    r.actions.insert(r.actions.end(), a, a + n);
    if (d.oversubscribed() && r.first_flagged < 0) r.first_flagged = static_cast<int>(i);
  }
  return r;
}

int count(const Trace& r, ActionKind k) {
  int n = 0;
  for (const OversubAction& a : r.actions) n += a.kind == k;
  return n;
}

OversubConfig two_cores(int omp_cap = 8) {
  OversubConfig c;
  c.budget_cpus = 2;
  c.omp_cap = omp_cap;
  return c;
}

TEST(Oversub, SustainedOverloadIsFlaggedWithinEnterSamples) {
  OversubDetector d(two_cores());
  std::vector<OversubSample> ss;
  for (int i = 0; i < 10; ++i) ss.push_back(sample(i, 6.0));  // 8 busy threads on 2 CPUs
  Trace r = feed(d, ss);
  EXPECT_EQ(r.first_flagged, d.config().enter_samples - 1);
  EXPECT_EQ(count(r, ActionKind::kOversubscribed), 1);
  ASSERT_GE(count(r, ActionKind::kLowerOmpCap), 1);
  EXPECT_LT(d.omp_cap(), 8);
  EXPECT_TRUE(d.summary().oversubscribed);
  EXPECT_DOUBLE_EQ(d.summary().max_wait_ratio, 3.0);
}

TEST(Oversub, TheTriggeringNumbersAreInTheAction) {
  OversubDetector d(two_cores());
  Trace r = feed(d, {sample(0, 2.0, 300), sample(1, 2.0, 300), sample(2, 2.0, 300)});
  ASSERT_GE(r.actions.size(), 2u);
  const OversubAction& lower = r.actions[1];
  EXPECT_EQ(lower.kind, ActionKind::kLowerOmpCap);
  EXPECT_EQ(lower.t_ns, 3 * kPeriod);
  EXPECT_DOUBLE_EQ(lower.wait_ratio, 1.0);
  EXPECT_DOUBLE_EQ(lower.invol_rate, 1500.0);  // 300 per 0.1 s on 2 CPUs
  EXPECT_DOUBLE_EQ(lower.demand_cpus, 4.0);
  EXPECT_EQ(lower.old_cap, 8);
  EXPECT_EQ(lower.new_cap, 4);  // 8 * budget 2 / demand 4
  EXPECT_NE(std::string(lower.text).find("8 -> 4"), std::string::npos);
  EXPECT_STREQ(action_kind_name(lower.kind), "lower_omp_cap");
}

TEST(Oversub, ASingleSpikeIsIgnored) {
  OversubDetector d(two_cores());
  std::vector<OversubSample> ss;
  for (int i = 0; i < 30; ++i) ss.push_back(sample(i, i % 10 == 5 ? 20.0 : 0.05));
  Trace r = feed(d, ss);
  EXPECT_EQ(r.first_flagged, -1);
  EXPECT_TRUE(r.actions.empty());
  EXPECT_FALSE(d.summary().oversubscribed);
  EXPECT_EQ(d.omp_cap(), 8);
}

TEST(Oversub, LeavesOnlyAfterHysteresis) {
  OversubConfig c = two_cores();
  OversubDetector d(c);
  std::vector<OversubSample> ss;
  int i = 0;
  for (; i < 5; ++i) ss.push_back(sample(i, 4.0));
  feed(d, ss);
  ASSERT_TRUE(d.oversubscribed());
  // Between the thresholds: neither hot nor calm, the state holds.
  for (int k = 0; k < 20; ++k, ++i) feed(d, {sample(i, 0.7)});  // wait ratio 0.35
  EXPECT_TRUE(d.oversubscribed());
  for (int k = 0; k < c.leave_samples - 1; ++k, ++i) feed(d, {sample(i, 0.1)});
  EXPECT_TRUE(d.oversubscribed());
  Trace r = feed(d, {sample(i++, 0.1)});
  EXPECT_FALSE(d.oversubscribed());
  EXPECT_EQ(count(r, ActionKind::kRecovered), 1);
  EXPECT_TRUE(d.summary().oversubscribed);  // ever
}

TEST(Oversub, CapNeverBelowOne) {
  OversubDetector d(two_cores(3));
  std::vector<OversubSample> ss;
  for (int i = 0; i < 200; ++i) ss.push_back(sample(i, 40.0));
  Trace r = feed(d, ss);
  EXPECT_EQ(d.omp_cap(), 1);
  for (const OversubAction& a : r.actions) {
    EXPECT_GE(a.new_cap, 1);
  }
  EXPECT_EQ(count(r, ActionKind::kAdvice), 1);  // once per episode, when there is nothing left
}

TEST(Oversub, WithinBudgetIsNeverFlagged) {
  OversubDetector d(two_cores());
  std::vector<OversubSample> ss;
  // Up to 0.4 threads waiting on 2 CPUs (0.2 per CPU), with plenty of preemptions.
  for (int i = 0; i < 1000; ++i) ss.push_back(sample(i, (i % 5) * 0.1, 50));
  Trace r = feed(d, ss);
  EXPECT_TRUE(r.actions.empty());
  EXPECT_FALSE(d.summary().oversubscribed);
  EXPECT_EQ(d.summary().samples, 1000u);
}

TEST(Oversub, PreemptionsFlagAModerateWait) {
  OversubDetector d(two_cores());
  std::vector<OversubSample> ss;
  for (int i = 0; i < 3; ++i) ss.push_back(sample(i, 0.6, 100));  // 0.3 waiting, 500/s per CPU
  EXPECT_GE(feed(d, ss).first_flagged, 0);
  OversubDetector quiet(two_cores());
  ss.clear();
  for (int i = 0; i < 3; ++i) ss.push_back(sample(i, 0.6, 0));
  EXPECT_EQ(feed(quiet, ss).first_flagged, -1);
}

TEST(Oversub, NoOpenMpCapMeansAdvice) {
  OversubConfig c = two_cores(0);
  OversubDetector d(c);
  Trace r = feed(d, {sample(0, 4), sample(1, 4), sample(2, 4)});
  EXPECT_EQ(count(r, ActionKind::kLowerOmpCap), 0);
  EXPECT_EQ(count(r, ActionKind::kAdvice), 1);
  EXPECT_EQ(d.omp_cap(), 0);
}

TEST(Oversub, FixedFrameworkPoolsGetAdviceBesideTheCap) {
  OversubConfig c = two_cores(4);
  c.fixed_pools = true;
  OversubDetector d(c);
  Trace r = feed(d, {sample(0, 4), sample(1, 4), sample(2, 4)});
  EXPECT_EQ(count(r, ActionKind::kLowerOmpCap), 1);
  ASSERT_EQ(count(r, ActionKind::kAdvice), 1);
  EXPECT_NE(std::string(r.actions.back().text).find("cannot be resized"), std::string::npos);
}

// A model server confined to one CPU: the thread that runs the model (1 CPU) and its
// event loop (0.7) are the program's own threads, and no pool of it is busy. The advice says
// so, names the event loop, and does not ask for fewer pool threads.
TEST(Oversub, AdviceTellsTheProgramsOwnThreadsFromPools) {
  OversubConfig c;
  c.budget_cpus = 1;
  c.omp_cap = 1;
  OversubDetector d(c);
  std::vector<OversubSample> ss;
  for (int i = 0; i < 5; ++i) {
    OversubSample s = sample(i, 0.7, 0, 0, 1.0);
    s.have_roles = true;
    s.pool_cpus = 0.0;
    s.own_cpus = 1.7;
    s.own_top[0] = {4242, 1.0, false, false};
    s.own_top[1] = {4200, 0.7, true, true};
    ss.push_back(s);
  }
  const Trace r = feed(d, ss);
  ASSERT_EQ(count(r, ActionKind::kAdvice), 1);
  std::string flagged, advice;
  for (const OversubAction& a : r.actions) {
    if (a.kind == ActionKind::kAdvice) advice = a.text;
    if (a.kind == ActionKind::kOversubscribed) flagged = a.text;
  }
  EXPECT_NE(flagged.find("the program's own threads 1.7"), std::string::npos) << flagged;
  EXPECT_NE(advice.find("thread 4200 (the main thread, an event loop)"), std::string::npos)
      << advice;
  EXPECT_NE(advice.find("thread 4242 (a request thread or a model's caller)"), std::string::npos)
      << advice;
  EXPECT_NE(advice.find("not pools"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("PARWIDTH_POOLS"), std::string::npos) << advice;

  // Its pools' threads alone want more than its CPU: fewer pool threads would help.
  OversubDetector p(c);
  for (OversubSample& s : ss) {
    s.pool_cpus = 1.5;
    s.own_cpus = 0.2;
    s.own_top[0] = {4200, 0.2, true, true};
    s.own_top[1] = {};
  }
  const Trace q = feed(p, ss);
  advice.clear();
  for (const OversubAction& a : q.actions)
    if (a.kind == ActionKind::kAdvice) advice = a.text;
  EXPECT_NE(advice.find("fewer pool threads (PARWIDTH_POOLS"), std::string::npos) << advice;
  EXPECT_NE(advice.find("the program's own threads: thread 4200"), std::string::npos) << advice;
}

TEST(Oversub, CapComesBackAfterALongCalm) {
  OversubConfig c = two_cores(8);
  OversubDetector d(c);
  int i = 0;
  for (; i < 3; ++i) feed(d, {sample(i, 6)});
  int lowered = d.omp_cap();
  ASSERT_LT(lowered, 8);
  Trace r;
  for (int k = 0; k < c.leave_samples + 4 * c.restore_samples; ++k, ++i) {
    Trace one = feed(d, {sample(i, 0)});
    r.actions.insert(r.actions.end(), one.actions.begin(), one.actions.end());
  }
  EXPECT_EQ(d.omp_cap(), 8);
  EXPECT_GE(count(r, ActionKind::kRaiseOmpCap), 1);
}

TEST(Oversub, ThreadsMovedByTheProgramAreReportedWhenTheirNumberGrows) {
  OversubDetector d(two_cores());
  Trace r = feed(d, {sample(0, 0, 0, 2), sample(1, 0, 0, 2), sample(2, 0, 0, 3), sample(3, 0, 0, 0),
                     sample(4, 0, 0, 1)});
  ASSERT_EQ(count(r, ActionKind::kAffinityKept), 3);
  EXPECT_STREQ(action_kind_name(ActionKind::kAffinityKept), "affinity_kept");
  EXPECT_NE(std::string(r.actions[0].text).find("left where"), std::string::npos);
  EXPECT_EQ(r.actions[0].strays, 2u);
  EXPECT_EQ(r.actions[1].strays, 3u);
  EXPECT_EQ(r.actions[2].strays, 1u);
}

// Another user's two busy threads on the same 2 CPUs as this process's 2: each of ours runs half
// the time and waits the other half. The process does not exceed its cores; the waiting is not
// its own, so it is recorded as contention and the cap stays.
TEST(Oversub, OtherProcessesLoadIsContentionAndKeepsTheCap) {
  OversubDetector d(two_cores(2));
  std::vector<OversubSample> ss;
  for (int i = 0; i < 100; ++i) ss.push_back(sample(i, 1.0, 400, 0, 1.0));
  Trace r = feed(d, ss);
  EXPECT_EQ(r.first_flagged, -1);
  EXPECT_EQ(count(r, ActionKind::kLowerOmpCap), 0);
  EXPECT_EQ(count(r, ActionKind::kAdvice), 0);
  ASSERT_EQ(count(r, ActionKind::kContention), 1);
  EXPECT_EQ(d.omp_cap(), 2);
  const OversubSummary sum = d.summary();
  EXPECT_FALSE(sum.oversubscribed);
  EXPECT_TRUE(sum.contention);
  EXPECT_DOUBLE_EQ(sum.max_contention_ratio, 0.5);
  EXPECT_DOUBLE_EQ(sum.max_own_ratio, 0.0);
  const OversubAction& a = r.actions[0];
  EXPECT_EQ(a.kind, ActionKind::kContention);
  EXPECT_DOUBLE_EQ(a.demand_cpus, 2.0);
  EXPECT_DOUBLE_EQ(a.contention_ratio, 0.5);
  EXPECT_STREQ(action_kind_name(a.kind), "contention");
  // The other load goes away: contention ends, once.
  ss.clear();
  for (int i = 100; i < 110; ++i) ss.push_back(sample(i, 0.0, 0, 0, 2.0));
  r = feed(d, ss);
  EXPECT_EQ(count(r, ActionKind::kContentionEnded), 1);
}

// One busy thread of another user's on each CPU: measured ratios scatter around 0.5 (0.42 to
// 0.53 here); the contention is recorded all the same, once, and nothing is lowered.
TEST(Oversub, ContentionScatteringAroundAHalfIsRecorded) {
  OversubDetector d(two_cores(2));
  std::vector<OversubSample> ss;
  const double waits[] = {0.84, 1.04, 0.9, 1.06, 0.96, 0.86};  // threads waiting, of 2 CPUs
  for (int i = 0; i < 60; ++i) ss.push_back(sample(i, waits[i % 6], 400, 0, 2.0 - waits[i % 6]));
  Trace r = feed(d, ss);
  EXPECT_EQ(count(r, ActionKind::kContention), 1);
  EXPECT_EQ(count(r, ActionKind::kLowerOmpCap), 0);
  EXPECT_EQ(r.first_flagged, -1);
  EXPECT_EQ(d.omp_cap(), 2);
}

// Both at once: this process's own excess (3 runnable threads on 2 CPUs) still lowers the cap,
// judged by the part of the wait it explains, not by the whole wait.
TEST(Oversub, OwnExcessUnderContentionIsStillOversubscription) {
  OversubDetector d(two_cores(3));
  std::vector<OversubSample> ss;
  for (int i = 0; i < 5; ++i) ss.push_back(sample(i, 2.0, 0, 0, 1.0));  // demand 3
  Trace r = feed(d, ss);
  EXPECT_EQ(r.first_flagged, d.config().enter_samples - 1);
  ASSERT_GE(count(r, ActionKind::kLowerOmpCap), 1);
  const OversubAction& lower = r.actions[1];
  EXPECT_DOUBLE_EQ(lower.own_ratio, 0.5);
  EXPECT_DOUBLE_EQ(lower.contention_ratio, 0.5);
  EXPECT_EQ(lower.new_cap, 2);  // 3 * 2 / 3
}

TEST(Oversub, CountersOfTheTriggeringSampleAreInTheAction) {
  OversubDetector d(two_cores());
  std::vector<OversubSample> ss;
  for (int i = 0; i < 3; ++i) {
    OversubSample s = sample(i, 6.0);
    s.have_counters = true;
    s.context_switches = 1000 + i;
    s.task_clock_ns = 200000000;
    ss.push_back(s);
  }
  Trace r = feed(d, ss);
  ASSERT_FALSE(r.actions.empty());
  EXPECT_TRUE(r.actions[0].counters.have_counters);
  EXPECT_EQ(r.actions[0].counters.context_switches, 1002u);
  EXPECT_EQ(r.actions[0].counters.task_clock_ns, 200000000u);
}

// The same /proc numbers as contention above (each of our 2 threads runs half the time and
// waits the other half), but the counters' task clock says child processes of this one (forked
// workers, which run on its CPUs) kept 1.4 CPUs busy beside its threads: the load is its own.
// /proc alone calls it contention and keeps the cap; with the counters it is oversubscription,
// and the children's CPUs are in the action.
TEST(Oversub, ChildProcessesCountedByTheCountersAreOwnDemand) {
  auto with_children = [](int i, bool counters) {
    OversubSample s = sample(i, 1.2, 0, 0, 1.0);
    s.have_counters = counters;
    s.task_clock_ns = static_cast<uint64_t>(2.4 * kPeriod);  // threads 1.0 + children 1.4
    return s;
  };
  OversubDetector proc_only(two_cores(4)), both(two_cores(4));
  std::vector<OversubSample> p, c;
  for (int i = 0; i < 20; ++i) {
    p.push_back(with_children(i, false));
    c.push_back(with_children(i, true));
  }
  Trace rp = feed(proc_only, p);
  EXPECT_EQ(rp.first_flagged, -1);
  EXPECT_EQ(count(rp, ActionKind::kContention), 1);
  EXPECT_EQ(proc_only.omp_cap(), 4);
  EXPECT_NEAR(proc_only.summary().max_own_ratio, 0.1, 1e-9);  // demand 2.2: 0.1 over budget

  Trace rc = feed(both, c);
  EXPECT_EQ(rc.first_flagged, both.config().enter_samples - 1);
  ASSERT_GE(count(rc, ActionKind::kLowerOmpCap), 1);
  const OversubAction& flag = rc.actions[0];
  EXPECT_EQ(flag.kind, ActionKind::kOversubscribed);
  EXPECT_NEAR(flag.children_cpus, 1.4, 1e-9);
  // The threads wait 1.2 per 1.0 run: the children, 1.68 for their 1.4.
  EXPECT_NEAR(flag.children_waiting_cpus, 1.68, 1e-9);
  EXPECT_NEAR(flag.demand_cpus, 1.0 + 1.2 + 1.4 + 1.68, 1e-9);
  EXPECT_NEAR(flag.own_ratio, (1.2 + 1.68) / 2, 1e-9);  // all of the wait is own
  EXPECT_NE(std::string(flag.text).find("child processes"), std::string::npos) << flag.text;
  EXPECT_LT(both.omp_cap(), 4);
  EXPECT_EQ(count(rc, ActionKind::kContention), 0);
}

// Measured on a 2-CPU guest: a team of 2 and four forked busy workers. Each task gets a third
// of a CPU; the threads, which also sleep at barriers, wait 0.47 per CPU, right at the
// threshold, so /proc's wait alone flags it only now and then. The children's wait, estimated
// with the threads' wait per run, makes it plainly this process's own overload.
TEST(Oversub, ChildProcessesWaitAsTheThreadsDo) {
  OversubDetector d(two_cores(2));
  std::vector<OversubSample> ss;
  for (int i = 0; i < 10; ++i) ss.push_back(counted(i, 0.94, 0.67, 2.0));  // children 1.33
  Trace r = feed(d, ss);
  EXPECT_EQ(r.first_flagged, d.config().enter_samples - 1);
  const OversubAction& flag = r.actions[0];
  EXPECT_NEAR(flag.children_waiting_cpus, 1.33 * 0.94 / 0.67, 1e-9);
  EXPECT_GT(flag.own_ratio, 1.0);
  EXPECT_EQ(d.omp_cap(), 1);
}

// A few child processes' CPU time beside other processes' load: the estimate adds only their
// share, and the rest stays contention.
TEST(Oversub, ALightChildBesideOtherLoadIsStillContention) {
  OversubDetector d(two_cores(2));
  std::vector<OversubSample> ss;
  for (int i = 0; i < 30; ++i) ss.push_back(counted(i, 1.0, 1.0, 1.2));  // children 0.2
  Trace r = feed(d, ss);
  EXPECT_EQ(r.first_flagged, -1);
  EXPECT_EQ(count(r, ActionKind::kContention), 1);
  EXPECT_NEAR(d.summary().max_own_ratio, 0.2, 1e-9);  // demand 2.4: 0.2 over budget
  EXPECT_EQ(d.omp_cap(), 2);
}

// Threads that hardly ran say nothing about how long a busy task waits: no estimate then.
TEST(Oversub, NoChildWaitEstimateFromThreadsThatHardlyRan) {
  OversubDetector d(two_cores(2));
  OversubAction a[kMaxActions];
  d.step(counted(0, 1.0, 0.01, 1.01), a, kMaxActions);
  EXPECT_DOUBLE_EQ(d.summary().max_wait_ratio, 0.5);
}

// A task clock below the threads' run time (a counter the kernel multiplexed, or one that
// counts less than schedstat) never lowers the demand: the counters only add what /proc
// cannot see.
TEST(Oversub, CountersNeverLowerTheDemand) {
  OversubDetector d(two_cores(4));
  OversubSample s = sample(0, 3.0, 0, 0, 2.0);
  s.have_counters = true;
  s.task_clock_ns = kPeriod / 2;
  OversubAction a[kMaxActions];
  d.step(s, a, kMaxActions);
  d.step(s, a, kMaxActions);
  const size_t n = d.step(s, a, kMaxActions);
  ASSERT_GE(n, 1u);
  EXPECT_DOUBLE_EQ(a[0].demand_cpus, 5.0);
  EXPECT_DOUBLE_EQ(a[0].children_cpus, 0.0);
}

TEST(Oversub, BadConfigAndEmptySamplesAreHarmless) {
  OversubConfig c;
  c.budget_cpus = 0;
  c.enter_samples = 0;
  c.omp_cap = -3;
  OversubDetector d(c);
  OversubAction a[4];
  EXPECT_EQ(d.step(OversubSample{}, a, 4), 0u);  // dt 0
  EXPECT_EQ(d.summary().samples, 0u);
  EXPECT_GE(d.step(sample(0, 5), nullptr, 0), 0u);
  EXPECT_TRUE(d.oversubscribed());
}

TEST(Oversub, StrayMeansAffinityOrCpuOutsideTheAssignedSet) {
  cpu_set_t pool, allowed;
  CPU_ZERO(&pool);
  CPU_SET(2, &pool);
  CPU_SET(3, &pool);
  CPU_ZERO(&allowed);
  CPU_SET(3, &allowed);
  EXPECT_FALSE(thread_is_stray(allowed, 3, pool));
  EXPECT_TRUE(thread_is_stray(allowed, 0, pool));  // migrated out before being pinned
  CPU_SET(0, &allowed);
  EXPECT_TRUE(thread_is_stray(allowed, 3, pool));  // may run outside the pool
}

}  // namespace
}  // namespace pw::gov
