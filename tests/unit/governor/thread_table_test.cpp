// Thread table: pool membership and core hand-out.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "governor/thread_table.h"

namespace pw::gov {
namespace {

Plan two_pools() {
  Plan p;
  p.pools = 2;
  p.threads = 2;
  p.core_sets = {{0, 1}, {2, 3}};
  return p;
}

// Where a thread is pinned, from its assignment: the runtime's pin of a new
// thread and the monitor's check of where it still runs both ask this.
TEST(AssignmentCpus, Table) {
  struct Case {
    const char* what;
    int pool, cpu;
    bool ok;
    std::vector<int> cpus;
  };
  const Case kCases[] = {
      {"one core of its pool", 1, 3, true, {3}},
      {"its pool's set (PARWIDTH_PIN=pool, a shared plan)", 1, -1, true, {2, 3}},
      {"the first pool", 0, -1, true, {0, 1}},
      {"not a pool member: nothing to pin to", -1, -1, false, {}},
      {"a CPU without a pool is no assignment", -1, 2, false, {}},
      {"a pool the plan does not have (an older plan's)", 2, -1, false, {}},
  };
  for (const Case& c : kCases) {
    Assignment a;
    a.pool = c.pool;
    a.cpu = c.cpu;
    std::vector<int> cpus;
    EXPECT_EQ(assignment_cpus(two_pools(), a, &cpus), c.ok) << c.what;
    if (c.ok) {
      EXPECT_EQ(cpus, c.cpus) << c.what;
    }
  }
  Plan empty_pool = two_pools();
  empty_pool.core_sets[1].clear();
  Assignment a;
  a.pool = 1;
  std::vector<int> cpus;
  EXPECT_FALSE(assignment_cpus(empty_pool, a, &cpus)) << "a pool without cores";
}

TEST(ThreadTable, RootThreadsRoundRobinOverPools) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  Assignment a = r.assign(-1);
  EXPECT_EQ(a.pool, 0);
  EXPECT_EQ(a.cpu, 1) << "the main thread counts as pool 0's first member";
  a = r.assign(-1);
  EXPECT_EQ(a.pool, 1);
  EXPECT_EQ(a.cpu, 2);
  a = r.assign(-1);
  EXPECT_EQ(a.pool, 0);
  EXPECT_EQ(a.cpu, 0) << "beyond the pool's cores: round-robin";
}

TEST(ThreadTable, ChildrenJoinTheirCreatorsPool) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  EXPECT_EQ(r.assign(1).cpu, 2);
  EXPECT_EQ(r.assign(1).cpu, 3);
  EXPECT_EQ(r.assign(1).cpu, 2);
  EXPECT_EQ(r.assign(1).pool, 1);
}

TEST(ThreadTable, PoolPinningHasNoSingleCpu) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kPool);
  Assignment a = r.assign(0);
  EXPECT_EQ(a.pool, 0);
  EXPECT_EQ(a.cpu, -1);
}

TEST(ThreadTable, ReplanWithAnotherPinModeKeepsRecordsAndChangesTheHandOut) {
  // Child processes came (gov::pin_in_force): the same plan, pool pinning; then back.
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  ThreadRecord t;
  t.tid = 42;
  t.pool = 1;
  t.cpu = 2;
  t.pinned = true;
  r.record(t);
  const unsigned g0 = r.generation();
  EXPECT_EQ(r.replan(two_pools(), PinMode::kPool), g0 + 1);
  EXPECT_EQ(r.pin(), PinMode::kPool);
  EXPECT_EQ(r.live().size(), 1u);
  Assignment a = r.reassign(1);
  EXPECT_EQ(a.pool, 1);
  EXPECT_EQ(a.cpu, -1);
  EXPECT_EQ(a.generation, g0 + 1);
  // A plan change alone keeps the mode in force.
  r.replan(two_pools());
  EXPECT_EQ(r.pin(), PinMode::kPool);
  r.replan(two_pools(), PinMode::kCore);
  EXPECT_EQ(r.pin(), PinMode::kCore);
  a = r.reassign(1);
  EXPECT_EQ(a.cpu, 2) << "one core per thread again, from the pool's first";
}

TEST(ThreadTable, APlanOnSharedCoresPinsToThePoolsSet) {
  // Three processes on two cores (governor/node_share's overlap): a thread is
  // pinned to the region, not one core, so the kernel balances the members.
  Plan one;
  one.core_sets = {{0}};
  const Plan shared = plan_shared(one, {0, 1});
  EXPECT_TRUE(shared.shared);
  EXPECT_EQ(shared.core_sets, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_EQ(shared.pools, one.pools);
  EXPECT_EQ(shared.threads, one.threads);
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  EXPECT_GE(r.assign(-1).cpu, 0);
  r.replan(shared);
  const Assignment a = r.assign(-1);
  EXPECT_EQ(a.pool, 0);
  EXPECT_EQ(a.cpu, -1);
  // Back to cores of its own: one core each again.
  r.replan(two_pools());
  EXPECT_GE(r.assign(-1).cpu, 0);
}

TEST(ThreadTable, APlanOnCoresSharedByTimePinsToAllOfThem) {
  // Two servers sharing four cores by time, a plan of two pools: each pool's
  // set is all four cores, and a thread is pinned to them, not one core.
  Plan two;
  two.pools = 2;
  two.threads = 2;
  two.core_sets = {{2, 3}, {0, 1}};
  const Plan t = plan_time_shared(two);
  EXPECT_TRUE(t.shared);
  EXPECT_EQ(t.core_sets, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {0, 1, 2, 3}}));
  EXPECT_EQ(t.pools, 2);
  EXPECT_EQ(t.threads, 2);
  ThreadTable r;
  r.reset(t, PinMode::kCore);
  const Assignment a = r.assign(-1);
  EXPECT_GE(a.pool, 0);
  EXPECT_EQ(a.cpu, -1);
  EXPECT_TRUE(plan_time_shared(Plan{}).core_sets.empty());
}

TEST(ThreadTable, NoPlanMeansNoAssignment) {
  ThreadTable r;
  r.reset(Plan{}, PinMode::kCore);
  EXPECT_EQ(r.assign(-1).pool, -1) << "a plan without pools governs nothing";
  EXPECT_EQ(r.assign(3).cpu, -1);
}

TEST(ThreadTable, ConcurrentAssignmentsHandOutEveryCoreEvenly) {
  ThreadTable r;
  Plan p;
  p.core_sets = {{0, 1, 2, 3}};
  r.reset(p, PinMode::kCore);
  std::vector<std::thread> ts;
  std::vector<int> counts(4, 0);
  std::mutex mu;
  for (int t = 0; t < 8; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        Assignment a = r.assign(0);
        std::lock_guard<std::mutex> lock(mu);
        counts[a.cpu]++;
      }
    });
  }
  for (auto& t : ts) t.join();
  for (int c : counts) EXPECT_EQ(c, 200);
}

TEST(ThreadTable, RecordsAndFindsThreads) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  ThreadRecord rec;
  rec.tid = 42;
  rec.creator = "libgomp.so.1";
  rec.pool = 1;
  rec.cpu = 3;
  rec.pinned = true;
  r.record(rec);
  ThreadRecord out;
  ASSERT_TRUE(r.find(42, &out));
  EXPECT_EQ(out.creator, "libgomp.so.1");
  EXPECT_FALSE(r.find(43, &out));
  EXPECT_EQ(r.snapshot().size(), 1u);
  r.reset(two_pools(), PinMode::kCore);
  EXPECT_TRUE(r.snapshot().empty());
}

// The kernel reuses the tid of an exited thread: find and update are about
// the thread that has it now, the last one recorded.
TEST(ThreadTable, AReusedTidMeansItsLastRecord) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  ThreadRecord first;
  first.tid = 42;
  first.creator = "exited";
  first.pinned = true;
  r.record(first);
  ThreadRecord now = first;
  now.creator = "alive";
  r.record(now);
  ThreadRecord out;
  ASSERT_TRUE(r.find(42, &out));
  EXPECT_EQ(out.creator, "alive");
  out.pinned = false;
  ASSERT_TRUE(r.update(out));
  const std::vector<ThreadRecord> all = r.snapshot();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].pinned);
  EXPECT_EQ(all[0].creator, "exited");
  EXPECT_FALSE(all[1].pinned);
}

}  // namespace
}  // namespace pw::gov

namespace pw::gov {
namespace {

// Thread ids come back after a thread exits (and wrap): the live record of a
// tid is the thread that has it now, never a dead one's (the monitor and a
// re-plan move threads by tid).
TEST(ThreadTable, AnEndedThreadsTidBelongsToTheNextThreadThatGetsIt) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  ThreadRecord old;
  old.tid = 7;
  old.pool = 0;
  old.cpu = 1;
  old.pinned = true;
  r.record(old);
  r.retire(7);
  ThreadRecord now = old;
  now.pool = 1;
  now.cpu = 3;
  r.record(now);
  ThreadRecord out;
  ASSERT_TRUE(r.find(7, &out));
  EXPECT_EQ(out.pool, 1);
  EXPECT_FALSE(out.ended);
  ASSERT_EQ(r.live().size(), 1u);
  EXPECT_EQ(r.live()[0].cpu, 3);
  EXPECT_EQ(r.ended(), 1u);
  const std::vector<ThreadRecord> all = r.snapshot();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[1].ended);
}

// 200k short-lived threads cost memory and report size that grew without
// bound: ended ones beyond the first kEndedListed are only counted.
TEST(ThreadTable, EndedThreadsBeyondTheListedOnesAreOnlyCounted) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  for (long tid = 1; tid <= 1000; ++tid) {
    ThreadRecord rec;
    rec.tid = tid;
    r.record(rec);
    if (tid > 1) r.retire(tid);
  }
  r.retire(12345);  // never recorded: nothing happens
  EXPECT_EQ(r.live().size(), 1u);
  EXPECT_EQ(r.ended(), 999u);
  EXPECT_EQ(r.ended_unlisted(), 999u - kEndedListed);
  EXPECT_EQ(r.snapshot().size(), 1u + kEndedListed);
  r.reset(two_pools(), PinMode::kCore);
  EXPECT_EQ(r.ended(), 0u);
}

// Threads start and end while others are created, the monitor reads the
// records and a re-plan swaps the layout: the ThreadSanitizer build runs this.
TEST(ThreadTable, ConcurrentStartsEndsReadsAndReplans) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&r, w] {
      for (long i = 0; i < 2000; ++i) {
        const Assignment a = r.assign(w % 2 ? 0 : -1);
        ThreadRecord rec;
        rec.tid = w * 100000 + i;
        rec.pool = a.pool;
        rec.cpu = a.cpu;
        r.record(rec);
        if (i % 3) r.retire(rec.tid);
      }
    });
  }
  workers.emplace_back([&r] {
    for (int i = 0; i < 200; ++i) {
      ThreadRecord out;
      (void)r.find(5, &out);
      (void)r.live();
      (void)r.snapshot();
      if (i % 50 == 0) r.replan(two_pools());
    }
  });
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(r.ended(), 4u * 1333u);
  EXPECT_EQ(r.live().size(), 4u * 667u);
}

TEST(ThreadTable, ReplanKeepsRecordsAndFollowsTheNewPlan) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  ThreadRecord rec;
  rec.tid = 5;
  r.record(rec);
  const unsigned g0 = r.generation();
  Plan one;
  one.core_sets = {{7}};
  EXPECT_EQ(r.replan(one), g0 + 1);
  EXPECT_EQ(r.snapshot().size(), 1u);
  Assignment a = r.assign(1);
  EXPECT_EQ(a.pool, 0) << "a creator pool the new plan lacks starts round-robin";
  EXPECT_EQ(a.cpu, 7);
  rec.cpu = 7;
  rec.pinned = true;
  EXPECT_TRUE(r.update(rec));
  ThreadRecord out;
  ASSERT_TRUE(r.find(5, &out));
  EXPECT_EQ(out.cpu, 7);
}

TEST(ThreadTable, AnAssignmentCarriesItsPlansGeneration) {
  ThreadTable r;
  r.reset(two_pools(), PinMode::kCore);
  const unsigned g0 = r.generation();
  EXPECT_EQ(r.assign(-1).generation, g0);
  Plan wide;
  wide.core_sets = {{4, 5, 6}};
  const unsigned g1 = r.replan(wide);
  EXPECT_NE(g1, g0);
  const Assignment a = r.assign(0);
  EXPECT_EQ(a.generation, g1) << "a thread can tell that the plan it took its core from is gone";
  EXPECT_EQ(a.cpu, 5);
}

TEST(ThreadTable, ReassignTakesThePoolModuloTheNewPlansPools) {
  ThreadTable r;
  Plan three;
  three.core_sets = {{0, 1}, {2, 3}, {4, 5}};
  r.reset(three, PinMode::kCore);
  r.replan(two_pools());
  Assignment a = r.reassign(2);
  EXPECT_EQ(a.pool, 0) << "pool 2 of three is pool 0 of two, as repin_threads moves them";
  EXPECT_EQ(a.cpu, 1);
  a = r.reassign(1);
  EXPECT_EQ(a.pool, 1);
  EXPECT_EQ(a.cpu, 2);
  EXPECT_EQ(a.generation, r.generation());
  EXPECT_EQ(r.reassign(-1).pool, 0) << "no pool: round-robin, like a root thread";
  r.replan(Plan{});
  EXPECT_EQ(r.reassign(1).pool, -1) << "a plan without pools governs nothing";
}

TEST(ThreadTable, WhichThreadsArePools) {
  struct Row {
    const char* creator;
    bool pool;
  };
  const Row rows[] = {
      {"libgomp.so.1", true},
      {"libgomp-a34b3233.so.1", true},  // a wheel's own copy
      {"libomp.so.5", true},
      {"libiomp5.so", true},
      {"onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so", true},
      {"libonnxruntime.so.1.17.0", true},
      {"std::thread (libstdc++.so.6) from libtorch_cpu.so.1.13", true},
      {"std::thread (libstdc++.so.6) from libtensorflow_framework.so.2", true},
      {"libopenblas.so.0", true},
      {"libmkl_gnu_thread.so.2", true},
      // The program's own: its interpreter's threads (request threads, an event
      // loop's executor), its own code's, and what cannot be told.
      {"python3.11", false},
      {"libpython3.11.so.1.0", false},
      {"libc.so.6 from python3.11", false},
      {"std::thread (libstdc++.so.6) from server", false},
      {"naive_engine", false},
      {"unknown", false},
      {"", false},
  };
  for (const Row& r : rows) EXPECT_EQ(thread_is_pool(r.creator), r.pool) << r.creator;
}

}  // namespace
}  // namespace pw::gov
