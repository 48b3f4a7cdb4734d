// The schedule simulator on small graphs against hand-computed schedules, the
// choice among candidates, and operator times from a machine model.
#include <gtest/gtest.h>

#include "governor/schedule.h"

namespace pw::gov {
namespace {

// A 2-core machine without overheads where an operator of f FLOPs takes
// f / min(t, 2) seconds on t threads (perfect scaling up to the cores), or
// f seconds whatever the team (no scaling at all).
MachineModel two_cores(bool scaling) {
  MachineModel m;
  m.cores = 2;
  m.op_overhead_s = 0;
  for (double f : {1.0, 1e6}) {
    SizeRow r;
    r.flops = f;
    for (int t = 1; t <= 4; ++t) r.seconds.push_back(scaling ? f / std::min(t, 2) : f);
    m.rows.push_back(r);
  }
  return m;
}

OpCost op(double flops, std::vector<uint32_t> preds = {}) {
  OpCost o;
  o.flops = flops;
  o.preds = std::move(preds);
  return o;
}

// A(4) -> B(2), C(2) -> D(4)
CostGraph diamond() {
  CostGraph g;
  g.ops = {op(4), op(2, {0}), op(2, {0}), op(4, {1, 2})};
  return g;
}

TEST(Simulate, DiamondWithPerfectScaling) {
  const MachineModel m = two_cores(true);
  const CostGraph g = diamond();
  EXPECT_NEAR(simulate(g, 1, 1, m), 12, 1e-9);  // 4 + 2 + 2 + 4
  EXPECT_NEAR(simulate(g, 1, 2, m), 6, 1e-9);   // everything at half
  EXPECT_NEAR(simulate(g, 2, 1, m), 10, 1e-9);  // 4 + max(2, 2) + 4
  // B and C ask for 4 threads on 2 cores: each gets one core, half of its
  // speed alone (1 s of work takes 2 s): 2 + 2 + 2.
  EXPECT_NEAR(simulate(g, 2, 2, m), 6, 1e-9);
  EXPECT_NEAR(simulate(g, 1, 4, m), 6, 1e-9);  // a team of 4 alone has 2 cores
}

TEST(Simulate, DiamondWithoutScaling) {
  const MachineModel m = two_cores(false);
  const CostGraph g = diamond();
  EXPECT_NEAR(simulate(g, 1, 1, m), 12, 1e-9);
  EXPECT_NEAR(simulate(g, 1, 2, m), 12, 1e-9);
  EXPECT_NEAR(simulate(g, 2, 1, m), 10, 1e-9);
  // Two teams of 2 on 2 cores, each as slow as one thread: half speed, 4 s.
  EXPECT_NEAR(simulate(g, 2, 2, m), 12, 1e-9);
}

TEST(Simulate, LongestRemainingPathFirst) {
  // Z(1), W(1), X(3) -> Y(3) on 2 pools of 1 thread. Index order would run
  // Z and W first and finish at 1 + 3 + 3 = 7; the critical path first: X
  // and Z, then W beside X, then Y: 6.
  CostGraph g;
  g.ops = {op(1), op(1), op(3), op(3, {2})};
  EXPECT_NEAR(simulate(g, 2, 1, two_cores(true)), 6, 1e-9);
  // Three pools on two cores: X, Z, W share them at 2/3 speed; Z and W end
  // at 1.5 s, X has 2 s left alone, then Y: 1.5 + 2 + 3.
  EXPECT_NEAR(simulate(g, 3, 1, two_cores(true)), 6.5, 1e-9);
  // One pool: the sum.
  EXPECT_NEAR(simulate(g, 1, 1, two_cores(true)), 8, 1e-9);
}

TEST(Simulate, ThreePoolsOnTwoCoresShare) {
  // Three independent 2-FLOP operators, 3 pools of 1 thread on 2 cores: all
  // three run at 2/3 speed and finish together at 3 s.
  CostGraph g;
  g.ops = {op(2), op(2), op(2)};
  EXPECT_NEAR(simulate(g, 3, 1, two_cores(true)), 3, 1e-9);
  EXPECT_NEAR(simulate(g, 2, 1, two_cores(true)), 4, 1e-9);  // 2 + 2
}

TEST(Simulate, NoScheduleForBadGraphs) {
  const MachineModel m = two_cores(true);
  CostGraph empty;
  EXPECT_LT(simulate(empty, 1, 1, m), 0);
  CostGraph cycle;
  cycle.ops = {op(1, {1}), op(1, {0})};
  EXPECT_LT(simulate(cycle, 1, 1, m), 0);
  CostGraph self;
  self.ops = {op(1, {0})};
  EXPECT_LT(simulate(self, 1, 1, m), 0);
  CostGraph bad;
  bad.ops = {op(1, {7})};
  EXPECT_LT(simulate(bad, 1, 1, m), 0);
  EXPECT_TRUE(candidates_predict(cycle, 2, 2, m).empty());
  EXPECT_EQ(model_choose(cycle, 2, 2, m).chosen, -1);
}

TEST(Choose, TiesGoToFewerThreadsThenFewerPools) {
  std::vector<Candidate> c = {{2, 2, 0.999}, {2, 1, 1.005}, {1, 2, 1.0}, {1, 1, 2.0}};
  const size_t i = candidate_choose(c);
  EXPECT_EQ(c[i].pools, 1);
  EXPECT_EQ(c[i].intra, 2);
  // Outside the tie fraction the fastest wins even with more threads.
  c = {{2, 2, 0.9}, {1, 2, 1.0}};
  EXPECT_EQ(candidate_choose(c), 0u);
}

TEST(Choose, DiamondCandidatesUpToTwiceTheCores) {
  const ModelChoice scaling = model_choose(diamond(), 2, 4, two_cores(true));
  // pools x intra <= 4: (1,1..4), (2,1..2), (3,1), (4,1)
  ASSERT_EQ(scaling.candidates.size(), 8u);
  ASSERT_GE(scaling.chosen, 0);
  const Candidate& a = scaling.candidates[static_cast<size_t>(scaling.chosen)];
  EXPECT_EQ(a.pools, 1);  // 6 s ties with (1,3), (1,4), (2,2): fewest threads
  EXPECT_EQ(a.intra, 2);
  EXPECT_NEAR(a.seconds, 6, 1e-9);

  const ModelChoice flat = model_choose(diamond(), 2, 4, two_cores(false));
  const Candidate& b = flat.candidates[static_cast<size_t>(flat.chosen)];
  EXPECT_EQ(b.pools, 2);
  EXPECT_EQ(b.intra, 1);
  EXPECT_NEAR(b.seconds, 10, 1e-9);

  // At most one pool per core: (1,1..4), (2,1..2).
  EXPECT_EQ(candidates_predict(diamond(), 2, 2, two_cores(true)).size(), 6u);
}

TEST(MachineModel, BuiltinIsMonotoneAndPenalisesOversubscription) {
  const MachineModel m = builtin_model(4);
  EXPECT_EQ(m.rows.front().seconds.size(), 8u);
  double prev = 0;
  for (double f = 1e3; f < 1e12; f *= 3) {
    const double s = op_seconds(m, f, 0, 1);
    EXPECT_GT(s, prev) << f;
    prev = s;
  }
  // Large operators scale with the team up to the cores, then lose.
  const double f = 1e9;
  EXPECT_LT(op_seconds(m, f, 0, 4), op_seconds(m, f, 0, 2));
  EXPECT_LT(op_seconds(m, f, 0, 2), op_seconds(m, f, 0, 1));
  EXPECT_GT(op_seconds(m, f, 0, 8), op_seconds(m, f, 0, 4));
  // Tiny operators do not: the team's fork/join costs more than it saves.
  EXPECT_GT(op_seconds(m, 1e3, 0, 4), op_seconds(m, 1e3, 0, 1));
  // Memory-bound light operators: bytes over per-core bandwidth.
  EXPECT_NEAR(op_seconds(m, 0, 8e9, 1), m.op_overhead_s + 1.0, 1e-9);
}

TEST(MachineModel, InterpolatesBetweenCalibratedSizes) {
  MachineModel m = two_cores(true);
  EXPECT_NEAR(op_seconds(m, 5e5, 0, 1), 5e5, 1e-3);
  EXPECT_NEAR(op_seconds(m, 5e5, 0, 2), 2.5e5, 1e-3);
  EXPECT_NEAR(op_seconds(m, 4e6, 0, 2), 2e6, 1e-3);  // above: per-FLOP rate of the last
}

}  // namespace
}  // namespace pw::gov
