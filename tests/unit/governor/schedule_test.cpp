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
  m.wake_s = 0;
  m.notify_s = 0;
  m.team_wake_s = 0;
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

TEST(Simulate, FirstComeFirstServed) {
  // Z(1), W(1), X(3) -> Y(3) on 2 pools of 1 thread, as executors run them:
  // Z and W first (ready first, lower index), X when Z ends, Y after X:
  // 1 + 3 + 3 = 7 (the critical path first would give 6).
  CostGraph g;
  g.ops = {op(1), op(1), op(3), op(3, {2})};
  EXPECT_NEAR(simulate(g, 2, 1, two_cores(true)), 7, 1e-9);
  // Three pools on two cores: X, Z, W share them at 2/3 speed; Z and W end
  // at 1.5 s, X has 2 s left alone, then Y: 1.5 + 2 + 3.
  EXPECT_NEAR(simulate(g, 3, 1, two_cores(true)), 6.5, 1e-9);
  // One pool: the sum.
  EXPECT_NEAR(simulate(g, 1, 1, two_cores(true)), 8, 1e-9);
}

TEST(Simulate, OperatorsMadeReadyJoinTheBackOfTheQueue) {
  // Towers of 4, 2 and 2 unit operators (A0..A3, B0, B1, C0, C1) on 2 pools:
  // A0 and B0 run, C0 waits; A1 and B1, made ready at 1, queue behind C0.
  //   [0,1] A0 B0   [1,2] C0 A1   [2,3] B1 C1   [3,4] A2   [4,5] A3
  // 5, where the longest tower first would give 4.
  CostGraph g;
  g.ops = {op(1), op(1), op(1), op(1, {0}), op(1, {1}), op(1, {2}), op(1, {3}), op(1, {6})};
  // index: 0 A0, 1 B0, 2 C0, 3 A1, 4 B1, 5 C1, 6 A2, 7 A3
  EXPECT_NEAR(simulate(g, 2, 1, two_cores(true)), 5, 1e-9);
}

TEST(Simulate, ThreePoolsOnTwoCoresShare) {
  // Three independent 2-FLOP operators, 3 pools of 1 thread on 2 cores: all
  // three run at 2/3 speed and finish together at 3 s.
  CostGraph g;
  g.ops = {op(2), op(2), op(2)};
  EXPECT_NEAR(simulate(g, 3, 1, two_cores(true)), 3, 1e-9);
  EXPECT_NEAR(simulate(g, 2, 1, two_cores(true)), 4, 1e-9);  // 2 + 2
}

// Like two_cores(true), but a team larger than the cores runs 1.5x slower
// than a team of exactly the cores (preempted threads inside barriers).
MachineModel two_cores_oversub_penalty() {
  MachineModel m = two_cores(true);
  for (SizeRow& r : m.rows)
    for (int t = 3; t <= 4; ++t) r.seconds[static_cast<size_t>(t) - 1] *= 1.5;
  return m;
}

TEST(Simulate, ConcurrentTeamsPayTheOversubscriptionOfTheirSum) {
  const MachineModel m = two_cores_oversub_penalty();
  const CostGraph g = diamond();
  EXPECT_NEAR(simulate(g, 1, 2, m), 6, 1e-9);  // fits: 2 + 1 + 1 + 2
  // One team of 4: every operator 1.5x its time on 2 threads: 3 + 1.5 + 1.5 + 3.
  EXPECT_NEAR(simulate(g, 1, 4, m), 9, 1e-9);
  // B and C together ask for 4 threads: half the cores each (1 s alone -> 2 s),
  // and 1.5x for the 4 threads on 2 cores: 3 s for both. 2 + 3 + 2.
  EXPECT_NEAR(simulate(g, 2, 2, m), 7, 1e-9);
  // Two pools of one thread fit the cores: no penalty, 4 + 2 + 4.
  EXPECT_NEAR(simulate(g, 2, 1, m), 10, 1e-9);
  // Three one-thread teams on two cores: 2/3 of a core each, and a team of 3
  // is 1.5x a team of 2: rate 4/9, three 2-FLOP operators end at 4.5 s.
  CostGraph three;
  three.ops = {op(2), op(2), op(2)};
  EXPECT_NEAR(simulate(three, 3, 1, m), 4.5, 1e-9);
  // So the oversubscribed candidates are no longer ties of the fitting ones.
  const ModelChoice c = model_choose(g, 2, 2, m);
  ASSERT_GE(c.chosen, 0);
  EXPECT_EQ(c.candidates[static_cast<size_t>(c.chosen)].pools, 1);
  EXPECT_EQ(c.candidates[static_cast<size_t>(c.chosen)].threads, 2);
}

TEST(Simulate, AnIdlePoolIsWokenBeforeItRuns) {
  MachineModel m = two_cores(true);
  m.wake_s = 0.5;
  m.team_wake_s = 0.5;
  const CostGraph g = diamond();
  // One pool never sleeps: the pool that finishes an operator takes the next.
  // Its team of 2 on 2 CPUs spins between operators (teams_sleep): 2 + 1 + 1 + 2.
  EXPECT_NEAR(simulate(g, 1, 2, m), 6, 1e-9);
  // Two pools of 1 (no team to wake): A (4); B stays on A's pool, C wakes the
  // idle pool (2.5); D runs on C's pool, awake as C ends: 4 + 2.5 + 4.
  EXPECT_NEAR(simulate(g, 2, 1, m), 10.5, 1e-9);
  // Two pools of 2 share the cores (half speed): A 2.5; B 1.5 s of work ends
  // at 2.5 + 3; C (1.5 s + 0.5 s to wake its pool) has 0.5 s left, alone:
  // 6; D on C's pool: 8.5.
  EXPECT_NEAR(simulate(g, 2, 2, m), 8.5, 1e-9);
  // A chain never wakes a pool, whatever the pool count.
  CostGraph chain;
  chain.ops = {op(1), op(1, {0}), op(1, {1})};
  EXPECT_NEAR(simulate(chain, 2, 1, m), 3, 1e-9);
  // Operators without predecessors start awake (the run wakes every pool).
  CostGraph two;
  two.ops = {op(1), op(1)};
  EXPECT_NEAR(simulate(two, 2, 1, m), 1, 1e-9);
}

TEST(Simulate, TeamsPayTheTeamWakeAndIdlePoolsTheThreadWake) {
  MachineModel m = two_cores(true);
  m.wake_s = 0.5;
  m.team_wake_s = 0.25;
  const CostGraph g = diamond();
  // One pool of 2 on 2 CPUs keeps 2 OpenMP threads: its team spins, no wake-up.
  EXPECT_NEAR(simulate(g, 1, 2, m), 6, 1e-9);
  // Two pools of 1: no team; C wakes the idle pool (+0.5): 4 + 2.5 + 4.
  EXPECT_NEAR(simulate(g, 2, 1, m), 10.5, 1e-9);
  // Two pools of 2 keep 1 + 2 OpenMP threads on 2 CPUs: their teams sleep.
  // At half speed: A 2.25; B (1.25) on A's pool and C (1.25 + 0.5 for
  // its pool) together, B ends at 2.25 + 2.5; C's last 0.5 alone: 5.25; D: + 2.25.
  EXPECT_NEAR(simulate(g, 2, 2, m), 7.5, 1e-9);
}

TEST(Simulate, SignallingASleepingPoolCostsTheSignaller) {
  MachineModel m = two_cores(true);
  m.notify_s = 0.25;
  // One pool has nobody to signal.
  CostGraph chain;
  chain.ops = {op(1), op(1, {0}), op(1, {1})};
  EXPECT_NEAR(simulate(chain, 1, 1, m), 3, 1e-9);
  // Two pools: the second sleeps from the start (nothing for it), and each
  // of the two releases signals it although the first pool runs the work.
  EXPECT_NEAR(simulate(chain, 2, 1, m), 3.5, 1e-9);
  // Diamond on two pools: A (4) releases B and C with one sleeper (+0.25 on
  // A's pool, which runs B: 2.25); C runs on the woken pool and ends at 6;
  // B ends at 6.25 and releases D while C's pool sleeps (+0.25): 6.25 + 4.25.
  EXPECT_NEAR(simulate(diamond(), 2, 1, m), 10.5, 1e-9);
  EXPECT_NEAR(simulate(diamond(), 1, 1, m), 12, 1e-9);
  // A fine-grained chain then prefers one pool, which the choice sees.
  const ModelChoice c = model_choose(chain, 2, 2, m);
  ASSERT_GE(c.chosen, 0);
  EXPECT_EQ(c.candidates[static_cast<size_t>(c.chosen)].pools, 1);
}

TEST(Simulate, FoldedOperatorsCostNothing) {
  MachineModel m = two_cores(true);
  m.op_overhead_s = 0.25;
  m.wake_s = 0.5;
  // A(4) -> C(2) <- F, F folded (shape arithmetic): 0.25 + 4 + 0.25 + 2 on one
  // pool; a second pool has nothing to take over and wakes for nothing.
  CostGraph g;
  g.ops = {op(4), op(100), op(2, {0, 1})};
  g.ops[1].folded = true;
  EXPECT_NEAR(simulate(g, 1, 1, m), 6.5, 1e-9);
  EXPECT_NEAR(simulate(g, 2, 1, m), 6.5, 1e-9);
}

TEST(Simulate, PoolsTakeTurnsAtTheExecutorsBookkeeping) {
  MachineModel m = two_cores(true);
  m.op_overhead_s = 1;
  // Two independent operators of 1 s bookkeeping + 2 s work. One pool: 3 + 3.
  CostGraph g;
  g.ops = {op(2), op(2)};
  EXPECT_NEAR(simulate(g, 1, 1, m), 6, 1e-9);
  // Two pools share the executor's lock (half speed each: both through it at
  // 2 s), then work side by side: 4, not 3.
  EXPECT_NEAR(simulate(g, 2, 1, m), 4, 1e-9);
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
  EXPECT_EQ(c[i].threads, 2);
  // Outside the tie fraction the fastest wins even with more threads.
  c = {{2, 2, 0.9}, {1, 2, 1.0}};
  EXPECT_EQ(candidate_choose(c), 0u);
}

TEST(Choose, DiamondCandidatesUpToTwiceTheCores) {
  const ModelChoice scaling = model_choose(diamond(), 2, 4, two_cores(true));
  // pools x threads <= 4: (1,1..4), (2,1..2), (3,1), (4,1)
  ASSERT_EQ(scaling.candidates.size(), 8u);
  ASSERT_GE(scaling.chosen, 0);
  const Candidate& a = scaling.candidates[static_cast<size_t>(scaling.chosen)];
  EXPECT_EQ(a.pools, 1);  // 6 s ties with (1,3), (1,4), (2,2): fewest threads
  EXPECT_EQ(a.threads, 2);
  EXPECT_NEAR(a.seconds, 6, 1e-9);

  const ModelChoice flat = model_choose(diamond(), 2, 4, two_cores(false));
  const Candidate& b = flat.candidates[static_cast<size_t>(flat.chosen)];
  EXPECT_EQ(b.pools, 2);
  EXPECT_EQ(b.threads, 1);
  EXPECT_NEAR(b.seconds, 10, 1e-9);

  // At most one pool per core: (1,1..4), (2,1..2).
  EXPECT_EQ(candidates_predict(diamond(), 2, 2, two_cores(true)).size(), 6u);
}

TEST(Choose, AChainOfLightOperatorsStaysOnOneThreadWhereATeamMustForkForEach) {
  // Ten operators of 1 s each on one thread in a chain, on a model whose team of two forks
  // and joins for 0.6 s at every operator (region_s) and scales perfectly otherwise.
  MachineModel m = two_cores(true);
  m.region_s = {0, 0.6, 0.6, 0.6};
  CostGraph chain;
  for (uint32_t i = 0; i < 10; ++i) chain.ops.push_back(i ? op(1, {i - 1}) : op(1));
  EXPECT_NEAR(simulate(chain, 1, 1, m), 10, 1e-9);
  EXPECT_NEAR(simulate(chain, 1, 2, m), 10 * (0.5 + 0.6), 1e-9);  // 11 s
  const ModelChoice c = model_choose(chain, 2, 2, m);
  const Candidate& a = c.candidates[static_cast<size_t>(c.chosen)];
  EXPECT_EQ(a.pools, 1);
  EXPECT_EQ(a.threads, 1);
  // Operators ten times larger: the team's fork is worth it (10 x (5 + 0.6) = 56 s < 100 s).
  for (OpCost& o : chain.ops) o.flops = 10;
  const ModelChoice big = model_choose(chain, 2, 2, m);
  EXPECT_EQ(big.candidates[static_cast<size_t>(big.chosen)].threads, 2);
  EXPECT_NEAR(big.candidates[static_cast<size_t>(big.chosen)].seconds, 56, 1e-9);
}

TEST(MachineModel, BuiltinIsMonotoneAndPenalisesOversubscription) {
  const MachineModel m = builtin_model(4);
  EXPECT_EQ(m.rows.front().seconds.size(), 8u);
  double prev = 0;
  for (double f = 1e3; f < 1e12; f *= 3) {
    const double s = op_seconds(m, f, 0, 1, false);
    EXPECT_GT(s, prev) << f;
    prev = s;
  }
  // Large operators scale with the team up to the cores, then lose.
  const double f = 1e9;
  EXPECT_LT(op_seconds(m, f, 0, 4, false), op_seconds(m, f, 0, 2, false));
  EXPECT_LT(op_seconds(m, f, 0, 2, false), op_seconds(m, f, 0, 1, false));
  EXPECT_GT(op_seconds(m, f, 0, 8, false), op_seconds(m, f, 0, 4, false));
  // Tiny operators do not: the team's fork/join costs more than it saves.
  EXPECT_GT(op_seconds(m, 1e3, 0, 4, false), op_seconds(m, 1e3, 0, 1, false));
  // Memory-bound light operators: bytes over per-core bandwidth.
  EXPECT_NEAR(op_seconds(m, 0, 8e9, 1, false), m.op_overhead_s + 1.0, 1e-9);
}

TEST(MachineModel, OversubscribedTeamIsNeverFasterThanTheCores) {
  // A calibration whose 2-thread cell met other load: 3 and 4 threads on 2 cores look faster.
  MachineModel m = two_cores(true);
  m.rows[1].seconds = {1e6, 8e5, 6e5, 7e5};
  EXPECT_NEAR(op_seconds(m, 1e6, 0, 2, false), 8e5, 1e-6);
  EXPECT_NEAR(op_seconds(m, 1e6, 0, 3, false), 8e5, 1e-6);  // the fitting team's time stands
  EXPECT_NEAR(op_seconds(m, 1e6, 0, 4, false), 8e5, 1e-6);
  m.rows[1].seconds = {1e6, 5e5, 6e5, 7e5};  // measured slower: kept as measured
  EXPECT_NEAR(op_seconds(m, 1e6, 0, 3, false), 6e5, 1e-6);
  // So a chain's plan does not oversubscribe on such a calibration.
  CostGraph chain;
  chain.ops = {op(1e6), op(1e6, {0}), op(1e6, {1})};
  m.rows[1].seconds = {1e6, 8e5, 6e5, 7e5};
  const ModelChoice c = model_choose(chain, 2, 2, m);
  ASSERT_GE(c.chosen, 0);
  EXPECT_EQ(c.candidates[static_cast<size_t>(c.chosen)].pools, 1);
  EXPECT_EQ(c.candidates[static_cast<size_t>(c.chosen)].threads, 2);
}

TEST(MachineModel, InterpolatesBetweenCalibratedSizes) {
  MachineModel m = two_cores(true);
  EXPECT_NEAR(op_seconds(m, 5e5, 0, 1, false), 5e5, 1e-3);
  EXPECT_NEAR(op_seconds(m, 5e5, 0, 2, false), 2.5e5, 1e-3);
  EXPECT_NEAR(op_seconds(m, 4e6, 0, 2, false), 2e6, 1e-3);  // above: per-FLOP rate of the last
}

}  // namespace
}  // namespace pw::gov
