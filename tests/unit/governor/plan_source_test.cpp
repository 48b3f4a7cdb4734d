// Which source decides the plan: user, measured, model, width.
#include <gtest/gtest.h>

#include "governor/plan_source.h"

namespace pw::gov {
namespace {

BudgetView two_core_budget() {
  BudgetView b;
  for (int c = 0; c < 2; ++c) b.cores.push_back({0, {c}});
  return b;
}

// f / min(t, 2) seconds: perfect scaling up to the 2 cores.
MachineModel scaling_model() {
  MachineModel m;
  m.cores = 2;
  m.op_overhead_s = 0;
  m.detail = "test model";
  for (double f : {1.0, 1e6}) {
    SizeRow r;
    r.flops = f;
    for (int t = 1; t <= 4; ++t) r.seconds.push_back(f / std::min(t, 2));
    m.rows.push_back(r);
  }
  return m;
}

// Two independent towers: W = 2, so the width rule says 2 pools x 1 thread.
CostGraph towers() {
  CostGraph g;
  g.ops.resize(4);
  for (auto& o : g.ops) o.flops = 2;
  g.ops[1].preds = {0};
  g.ops[3].preds = {2};
  return g;
}

MeasuredPlan measured(int pools, int threads, double seconds, const std::string& how) {
  MeasuredPlan m;
  m.known = true;
  m.pools = pools;
  m.threads = threads;
  m.seconds = seconds;
  m.how = how;
  return m;
}

PlanInputs inputs(const CostGraph* g, const MachineModel* m) {
  PlanInputs in;
  in.width.known = true;
  in.width.avg_width = 2;
  in.width.max_level_width = 2;
  in.costs = g;
  in.model = m;
  return in;
}

TEST(PlanSource, AutoPrefersMeasuredThenModelThenWidth) {
  const CostGraph g = towers();
  const MachineModel m = scaling_model();
  PlanInputs in = inputs(&g, &m);
  in.measured = measured(1, 1, 0.5, "parwidth tune, 6 runs");
  Plan p = plan_choose(two_core_budget(), in, {});
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 1);
  EXPECT_EQ(p.source_detail, "parwidth tune, 6 runs");

  in.measured = {};
  p = plan_choose(two_core_budget(), in, {});
  // (1,2) and (2,1) both take 4 s with 2 threads; the fewer pools win.
  EXPECT_EQ(p.source, "model");
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{{0, 1}}));
  ASSERT_EQ(p.predicted.size(), 6u);  // (1,1..4), (2,1..2)
  EXPECT_NEAR(p.predicted[0].seconds, 8, 1e-9);

  in.costs = nullptr;
  p = plan_choose(two_core_budget(), in, {});
  EXPECT_EQ(p.source, "width");
  EXPECT_EQ(p.pools, 2);
  EXPECT_NE(p.source_detail.find("costs unknown"), std::string::npos);
  EXPECT_TRUE(p.predicted.empty());
}

TEST(PlanSource, ModesAndUser) {
  const CostGraph g = towers();
  const MachineModel m = scaling_model();
  PlanInputs in = inputs(&g, &m);
  in.measured = measured(1, 1, 0.5, "sweep");
  in.mode = PlanMode::kWidth;
  Plan p = plan_choose(two_core_budget(), in, {});
  EXPECT_EQ(p.source, "width");
  EXPECT_EQ(p.pools, 2);
  EXPECT_TRUE(p.source_detail.empty());

  in.mode = PlanMode::kModel;
  EXPECT_EQ(plan_choose(two_core_budget(), in, {}).source, "model");
  in.model = nullptr;
  p = plan_choose(two_core_budget(), in, {});
  EXPECT_EQ(p.source, "width");
  EXPECT_NE(p.source_detail.find("no machine model"), std::string::npos);

  in.mode = PlanMode::kMeasured;
  in.measured = {};
  p = plan_choose(two_core_budget(), in, {});
  EXPECT_EQ(p.source, "width");
  EXPECT_NE(p.source_detail.find("no measured plan"), std::string::npos);

  PlanOptions user;
  user.pools = 1;
  in.mode = PlanMode::kAuto;
  in.measured = measured(2, 1, 0.5, "sweep");
  p = plan_choose(two_core_budget(), in, user);
  EXPECT_EQ(p.source, "user");
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 2);
}

}  // namespace
}  // namespace pw::gov
