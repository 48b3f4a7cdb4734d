// governor/simulate: makespans computed by hand on small task graphs.
#include "governor/simulate.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

// 1e10 FLOPs at 1e10 FLOP/s: one second on one thread.
constexpr double kSec = 1e10;

SimResult run(const std::vector<SimTask>& t, int pools, int intra, const TimeModel& m) {
  SimResult r;
  EXPECT_TRUE(simulate(t, pools, intra, m, &r));
  return r;
}

TEST(Simulate, OpTimeIsAmdahlPlusOverhead) {
  TimeModel m;
  m.serial = 0.5;
  m.overhead_s = 0.1;
  EXPECT_DOUBLE_EQ(op_time(kSec, 1, m), 1.1);
  EXPECT_DOUBLE_EQ(op_time(kSec, 2, m), 0.1 + 0.75);
  EXPECT_DOUBLE_EQ(op_time(kSec, 4, m), 0.1 + 0.625);
  EXPECT_DOUBLE_EQ(op_time(0, 4, m), 0.1);
}

TEST(Simulate, ChainIsItsSpanWhateverThePools) {
  std::vector<SimTask> t = {{kSec, {}}, {kSec, {0}}, {kSec, {1}}};
  TimeModel m;
  for (int pools : {1, 2, 4}) {
    SimResult r = run(t, pools, 2, m);
    EXPECT_DOUBLE_EQ(r.makespan_s, 1.5) << pools;  // 3 x 0.5 s
    EXPECT_DOUBLE_EQ(r.span_s, 1.5);
  }
}

TEST(Simulate, DiamondPrefersPoolsWhenTeamsScalePoorly) {
  // a(1) -> b(2), c(2) -> d(1), in seconds on one thread.
  std::vector<SimTask> t = {{kSec, {}}, {2 * kSec, {0}}, {2 * kSec, {0}}, {kSec, {1, 2}}};
  TimeModel perfect;
  // 1 pool x 2 threads, perfect scaling: 0.5 + 1 + 1 + 0.5 = 3; 2 pools x 1: 1 + 2 + 1 = 4.
  EXPECT_DOUBLE_EQ(run(t, 1, 2, perfect).makespan_s, 3.0);
  EXPECT_DOUBLE_EQ(run(t, 2, 1, perfect).makespan_s, 4.0);
  TimeModel poor;
  poor.serial = 0.5;  // two threads: 0.75 of the one-thread time
  EXPECT_DOUBLE_EQ(run(t, 1, 2, poor).makespan_s, 0.75 + 1.5 + 1.5 + 0.75);
  EXPECT_DOUBLE_EQ(run(t, 2, 1, poor).makespan_s, 4.0);
  // Work and span at intra 1.
  SimResult r = run(t, 2, 1, poor);
  EXPECT_DOUBLE_EQ(r.work_s, 6.0);
  EXPECT_DOUBLE_EQ(r.span_s, 4.0);
}

TEST(Simulate, LongestRemainingPathGoesFirst) {
  // Tasks of 1, 3 and 2 s, and 2.5 s after the 1 s one: the 1 s task heads the longest
  // path (3.5 s), so it starts first although it is the shortest.
  std::vector<SimTask> t = {{kSec, {}}, {3 * kSec, {}}, {2 * kSec, {}}, {2.5 * kSec, {0}}};
  TimeModel m;
  SimResult r = run(t, 2, 1, m);
  // Bottom levels: t0 3.5, t1 3, t2 2, t3 2.5. Start t0 and t1 at 0; at 1 t0 ends: t3 (2.5)
  // before t2 (2): t3 runs 1..3.5, t2 runs 3..5 on the pool t1 frees.
  EXPECT_DOUBLE_EQ(r.makespan_s, 5.0);
  // One pool: everything in sequence.
  EXPECT_DOUBLE_EQ(run(t, 1, 1, m).makespan_s, 8.5);
}

TEST(Simulate, OverheadCountsPerOperator) {
  std::vector<SimTask> t = {{0, {}}, {0, {0}}, {0, {}}};
  TimeModel m;
  m.overhead_s = 0.25;
  EXPECT_DOUBLE_EQ(run(t, 1, 4, m).makespan_s, 0.75);
  EXPECT_DOUBLE_EQ(run(t, 2, 4, m).makespan_s, 0.5);
}

TEST(Simulate, EmptyCyclesAndBadIndices) {
  SimResult r;
  r.makespan_s = 42;
  EXPECT_TRUE(simulate({}, 2, 2, TimeModel{}, &r));
  EXPECT_DOUBLE_EQ(r.makespan_s, 0);
  SimResult keep;
  keep.makespan_s = 7;
  EXPECT_FALSE(simulate({{1, {1}}, {1, {0}}}, 1, 1, TimeModel{}, &keep));
  EXPECT_FALSE(simulate({{1, {5}}}, 1, 1, TimeModel{}, &keep));
  EXPECT_DOUBLE_EQ(keep.makespan_s, 7);                        // untouched on failure
  EXPECT_TRUE(simulate({{kSec, {}}}, 0, 0, TimeModel{}, &r));  // clamped to 1 x 1
  EXPECT_DOUBLE_EQ(r.makespan_s, 1.0);
}

}  // namespace
}  // namespace pw::gov
