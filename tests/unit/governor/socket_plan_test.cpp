// Plans on budgets of several sockets and with SMT siblings (governor/socket_plan):
// a team that fits a socket stays in one, the plan spans sockets only where the
// model predicts it kSpanMargin faster, and a sibling is a fraction of a core.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "governor/plan_source.h"
#include "governor/socket_plan.h"
#include "tests/unit/governor/budgets.h"

namespace pw::gov {
namespace {

using test::machine;

// A chain of n operators of `flops` each.
CostGraph chain(int n, double flops) {
  CostGraph g;
  g.ops.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    g.ops[static_cast<size_t>(i)].flops = flops;
    g.ops[static_cast<size_t>(i)].bytes = flops / 20;
    if (i > 0) g.ops[static_cast<size_t>(i)].preds = {static_cast<uint32_t>(i - 1)};
  }
  return g;
}

// `towers` independent chains of `n` operators each.
CostGraph towers(int towers, int n, double flops) {
  CostGraph g;
  for (int k = 0; k < towers; ++k) {
    const size_t base = g.ops.size();
    for (int i = 0; i < n; ++i) {
      OpCost o;
      o.flops = flops;
      o.bytes = flops / 20;
      if (i > 0) o.preds = {static_cast<uint32_t>(base + static_cast<size_t>(i) - 1)};
      g.ops.push_back(o);
    }
  }
  return g;
}

TEST(SocketShape, FromTheBudget) {
  struct Case {
    const char* name;
    BudgetView b;
    bool smt;
    SocketShape want;
  };
  BudgetView uneven = machine(1, 3, 1);
  for (int c = 0; c < 2; ++c) uneven.cores.push_back({1, {10 + c}});
  const std::vector<Case> cases = {
      {"one socket, two cores", machine(1, 2, 1), false, {1, 2, 1}},
      {"2 x 28 x 2, no smt", machine(2, 28, 2), false, {2, 28, 1}},
      {"2 x 28 x 2, smt", machine(2, 28, 2), true, {2, 56, 2}},
      {"4 x 8", machine(4, 8, 1), false, {4, 8, 1}},
      {"3 + 2 cores: the smaller socket", uneven, false, {2, 2, 1}},
  };
  for (const Case& c : cases) {
    const SocketShape s = socket_shape(c.b, c.smt);
    EXPECT_EQ(s.sockets, c.want.sockets) << c.name;
    EXPECT_EQ(s.slots_per_socket, c.want.slots_per_socket) << c.name;
    EXPECT_EQ(s.pus_per_core, c.want.pus_per_core) << c.name;
  }
}

TEST(ModelPlaced, PerSocketKeepsTheSocketsTimesSpanningPaysTheInterconnect) {
  const MachineModel m = builtin_model(16);
  const double f = 1e9;
  // One socket of 8 used: a team of up to 8 as on the whole budget, 16
  // threads oversubscribe its 8 cores (slower than 8).
  const MachineModel one = model_placed(m, 8, 1, false);
  EXPECT_EQ(one.cores, 8);
  for (int t : {1, 4, 8})
    EXPECT_DOUBLE_EQ(op_seconds(one, f, 0, t, false), op_seconds(m, f, 0, t, false)) << t;
  EXPECT_GT(op_seconds(one, f, 0, 16, false), op_seconds(one, f, 0, 8, false));
  // Both sockets used, per socket: the cores and the times as they were.
  const MachineModel both = model_placed(m, 8, 2, false);
  EXPECT_EQ(both.cores, 16);
  EXPECT_DOUBLE_EQ(op_seconds(both, f, 0, 8, false), op_seconds(m, f, 0, 8, false));
  // Spanning: teams within a socket unchanged; larger ones span_factor slower.
  const MachineModel span = model_placed(m, 8, 2, true);
  EXPECT_DOUBLE_EQ(op_seconds(span, f, 0, 8, false), op_seconds(m, f, 0, 8, false));
  const double ratio = op_seconds(span, f, 0, 16, false) / op_seconds(m, f, 0, 16, false);
  EXPECT_NEAR(ratio, m.span_factor, 0.05);
  // Two sockets speed a large operator up by about 2 / span_factor (1.43x), not 2x.
  const double speedup = op_seconds(one, f, 0, 8, false) / op_seconds(span, f, 0, 16, false);
  EXPECT_GT(speedup, 1.3);
  EXPECT_LT(speedup, 1.6);
  // Four sockets of 4: a team over all four has 3/4 of its memory remote, not 1/2.
  const MachineModel four = model_placed(m, 4, 4, true);
  EXPECT_NEAR(op_seconds(four, f, 0, 16, false) / op_seconds(m, f, 0, 16, false),
              1 + (m.span_factor - 1) * 1.5, 0.05);
  EXPECT_NEAR(op_seconds(four, f, 0, 8, false) / op_seconds(m, f, 0, 8, false), m.span_factor,
              0.05);
  // Measured spanning times (a calibration on these sockets) are taken as they are.
  MachineModel measured = m;
  measured.span_measured = true;
  EXPECT_DOUBLE_EQ(op_seconds(model_placed(measured, 8, 2, true), f, 0, 16, false),
                   op_seconds(m, f, 0, 16, false));
}

TEST(ModelPlaced, MemoryBoundOperatorsSaturateOneSocketsBandwidth) {
  struct Case {
    double socket_bytes_per_s;  // 0: built in, 8 cores' streams
    int threads;
    double want_bytes_per_s;  // what the team moves
  };
  MachineModel m = builtin_model(32);
  m.op_overhead_s = 0;
  const double core = m.bytes_per_s;
  const std::vector<Case> cases = {
      {0, 4, 4 * core},    {0, 16, 8 * core}, {0, 32, 8 * core},
      {5e10, 4, 4 * core}, {5e10, 16, 5e10},  {5e10, 32, 5e10},
  };
  const double bytes = 1e9;  // far beyond any cache
  for (const Case& c : cases) {
    MachineModel mm = m;
    mm.socket_bytes_per_s = c.socket_bytes_per_s;
    const MachineModel placed = model_placed(mm, 16, 2, true);
    const double s = op_seconds(placed, 0, bytes, c.threads, false);
    EXPECT_NEAR(bytes / s, c.want_bytes_per_s, 0.02 * c.want_bytes_per_s)
        << c.socket_bytes_per_s << " " << c.threads;
  }
  // Without a layout (one socket, as always): no roofline.
  EXPECT_NEAR(bytes / op_seconds(m, 0, bytes, 32, false), 32 * core, 0.02 * 32 * core);
}

TEST(Simulate, OperatorsOnOneSocketShareItsMemory) {
  // Four towers of memory-bound operators (1e8 bytes, no FLOPs) on four pools of four.
  CostGraph g = towers(4, 5, 0);
  for (OpCost& o : g.ops) o.bytes = 1e8;
  const double bytes = 4 * 5 * 1e8;
  MachineModel m = builtin_model(32);
  m.socket_bytes_per_s = 4e10;
  struct Case {
    int sockets_used;  // of model_placed's layout: the pools' sockets
    double at_least;   // seconds: all bytes through the sockets' memory
  };
  const std::vector<Case> cases = {{1, bytes / 4e10}, {2, bytes / 8e10}, {4, bytes / 16e10}};
  double last = 1e300;
  for (const Case& c : cases) {
    const MachineModel placed = model_placed(m, 8, c.sockets_used, false);
    const double s = simulate(g, 4, 4, placed);
    EXPECT_GE(s, 0.99 * c.at_least) << c.sockets_used;
    EXPECT_LT(s, last) << c.sockets_used;  // more sockets, more memory
    last = s;
  }
  // Without a layout (one socket, as before): no sharing, so faster than one socket's memory
  // allows.
  MachineModel plain = m;
  plain.team_bytes_per_s_max = 4e10;
  EXPECT_LT(simulate(g, 4, 4, plain), 0.9 * bytes / 4e10);
}

TEST(ModelSmt, ASiblingAddsLittle) {
  const MachineModel m = builtin_model(8);
  const MachineModel s = model_smt(m, 2);
  EXPECT_EQ(s.cores, 16);
  const double f = 1e9;
  // Two siblings of one core: about one core plus smt_gain.
  EXPECT_NEAR(op_seconds(m, f, 0, 1, false) / op_seconds(s, f, 0, 2, false), 1 + m.smt_gain, 0.02);
  // 16 slots on 8 cores: far slower than 16 cores would be, a little faster than 8.
  const double t8 = op_seconds(m, f, 0, 8, false), t16 = op_seconds(s, f, 0, 16, false);
  EXPECT_LT(t16, t8);
  EXPECT_GT(t16, t8 / 1.2);
  EXPECT_GT(t16, 1.5 * op_seconds(builtin_model(16), f, 0, 16, false));
  // No siblings: the model as it is.
  EXPECT_EQ(model_smt(m, 1).rows[0].seconds, m.rows[0].seconds);
}

// The Done-when rule on tables of graphs and described machines: a pool spans
// sockets only where the fastest spanning candidate is predicted kSpanMargin
// faster than the fastest per-socket one, and the choice says why.
TEST(SocketChoose, SpansOnlyWhereTheModelPredictsItTenPercentFaster) {
  struct Case {
    const char* name;
    CostGraph g;
    int sockets, cores;
    bool want_span;
  };
  const std::vector<Case> cases = {
      {"tiny chain (1e5 FLOPs)", chain(20, 1e5), 2, 28, false},
      {"small chain (1e7 FLOPs)", chain(20, 1e7), 2, 28, false},
      {"two towers of small operators", towers(2, 10, 1e7), 2, 28, false},
      {"eight towers of medium operators", towers(8, 5, 1e8), 2, 16, false},
      {"chain of huge operators (1e11 FLOPs)", chain(10, 1e11), 2, 28, true},
      {"tiny chain on four sockets", chain(20, 1e5), 4, 8, false},
  };
  for (const Case& c : cases) {
    const MachineModel m = builtin_model(c.sockets * c.cores);
    const SocketShape shape{c.sockets, c.cores, 1};
    const SocketChoice ch = socket_choose(c.g, shape, c.sockets * c.cores, m);
    ASSERT_GE(ch.chosen, 0) << c.name;
    ASSERT_GE(ch.best_socket, 0) << c.name;
    ASSERT_GE(ch.best_span, 0) << c.name;
    const Candidate& chosen = ch.candidates[static_cast<size_t>(ch.chosen)];
    const Candidate& per = ch.candidates[static_cast<size_t>(ch.best_socket)];
    const Candidate& span = ch.candidates[static_cast<size_t>(ch.best_span)];
    EXPECT_FALSE(per.spans) << c.name;
    EXPECT_TRUE(span.spans) << c.name;
    EXPECT_EQ(chosen.spans, span.seconds <= (1 - kSpanMargin) * per.seconds) << c.name;
    EXPECT_EQ(chosen.spans, c.want_span) << c.name << ": " << ch.why;
    // Every per-socket team fits its socket; every spanning one does not.
    for (const Candidate& x : ch.candidates)
      EXPECT_EQ(x.spans, x.threads > c.cores) << c.name << " " << x.pools << " x " << x.threads;
    EXPECT_NE(ch.why.find(chosen.spans ? "spanning:" : "per socket:"), std::string::npos) << ch.why;
  }
}

TEST(PlanFor, PerSocketCoreSetsStayInsideTheirSockets) {
  struct Case {
    int pools;
    std::vector<std::vector<int>> want;  // core sets
  };
  // 2 sockets x 4 cores, PUs 0..7 (socket 0: 0-3, socket 1: 4-7).
  const std::vector<Case> cases = {
      {1, {{0, 1, 2, 3}}},
      {2, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {4, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
      {6, {{0, 1}, {2}, {3}, {4, 5}, {6}, {7}}},
  };
  for (const Case& c : cases) {
    PlanOptions o;
    o.pools = c.pools;
    o.threads = 2;
    o.per_socket = true;
    const Plan p = plan_for(machine(2, 4, 1), {}, o);
    EXPECT_EQ(p.core_sets, c.want) << c.pools;
    EXPECT_EQ(p.spanning_pools, 0) << c.pools;
  }
  // Without per_socket, one pool over both sockets spans, as before.
  PlanOptions o;
  o.pools = 1;
  EXPECT_EQ(plan_for(machine(2, 4, 1), {}, o).spanning_pools, 1);
}

TEST(PlanChoose, TwoSocketsPlanSaysPerSocketOrSpanningAndOneSocketIsUnchanged) {
  struct Case {
    const char* name;
    CostGraph g;
    bool want_span;
  };
  const std::vector<Case> cases = {
      {"small chain", chain(20, 1e7), false},
      {"huge chain", chain(10, 1e11), true},
  };
  for (const Case& c : cases) {
    const MachineModel m = builtin_model(56);
    PlanInputs in;
    in.width.known = true;
    in.costs = &c.g;
    in.model = &m;
    const Plan p = plan_choose(machine(2, 28, 2), in, {});
    EXPECT_EQ(p.source, "model") << c.name;
    EXPECT_EQ(p.spanning_pools > 0, c.want_span) << c.name;
    bool says = false;
    for (const std::string& n : p.notes)
      says = says || n.rfind(c.want_span ? "spanning:" : "per socket:", 0) == 0;
    EXPECT_TRUE(says) << c.name;
    for (const Plan::Predicted& x : p.predicted) EXPECT_EQ(x.spans, x.threads > 28) << c.name;
  }
  // One socket: the candidates and the choice of model_choose, nothing spans.
  const CostGraph g = towers(2, 10, 1e7);
  const MachineModel m = builtin_model(2);
  PlanInputs in;
  in.width.known = true;
  in.costs = &g;
  in.model = &m;
  const Plan p = plan_choose(machine(1, 2, 1), in, {});
  const ModelChoice mc = model_choose(g, 2, 2, m);
  ASSERT_GE(mc.chosen, 0);
  ASSERT_EQ(p.predicted.size(), mc.candidates.size());
  for (size_t i = 0; i < p.predicted.size(); ++i) {
    EXPECT_DOUBLE_EQ(p.predicted[i].seconds, mc.candidates[i].seconds);
    EXPECT_FALSE(p.predicted[i].spans);
  }
  EXPECT_EQ(p.pools, mc.candidates[static_cast<size_t>(mc.chosen)].pools);
  EXPECT_EQ(p.threads, mc.candidates[static_cast<size_t>(mc.chosen)].threads);
}

TEST(Calibration, SocketsAndSmtRoundTripAndStayBuiltInWhereNotMeasured) {
  Calibration c;
  c.machine = "m";
  c.budget = "b";
  c.created = 1'800'000'000;
  c.model = builtin_model(4);
  std::string why;
  Calibration back;
  // Nothing measured (one socket, no SMT): no keys, the built-in values.
  std::string text = calibration_format(c);
  EXPECT_EQ(text.find("span_factor"), std::string::npos);
  EXPECT_EQ(text.find("smt_gain"), std::string::npos);
  ASSERT_EQ(calibration_parse(text, "m", "b", c.created, &back, &why), Status::kOk) << why;
  EXPECT_FALSE(back.model.span_measured || back.model.smt_measured ||
               back.model.socket_bytes_measured);
  EXPECT_DOUBLE_EQ(back.model.span_factor, MachineModel().span_factor);
  EXPECT_DOUBLE_EQ(back.model.smt_gain, MachineModel().smt_gain);
  // Measured: kept.
  c.model.span_factor = 1.7;
  c.model.span_region_s = 8e-6;
  c.model.span_measured = true;
  c.model.socket_bytes_per_s = 6e10;
  c.model.socket_bytes_measured = true;
  c.model.smt_gain = 0.05;
  c.model.smt_measured = true;
  text = calibration_format(c);
  ASSERT_EQ(calibration_parse(text, "m", "b", c.created, &back, &why), Status::kOk) << why;
  EXPECT_TRUE(back.model.span_measured && back.model.smt_measured &&
              back.model.socket_bytes_measured);
  EXPECT_DOUBLE_EQ(back.model.span_factor, 1.7);
  EXPECT_DOUBLE_EQ(back.model.span_region_s, 8e-6);
  EXPECT_DOUBLE_EQ(back.model.socket_bytes_per_s, 6e10);
  EXPECT_DOUBLE_EQ(back.model.smt_gain, 0.05);
  // Out of range: corrupt.
  for (const char* bad : {"span_factor 0.5", "smt_gain 3", "socket_bytes_per_s 1"}) {
    std::string t = calibration_format(c);
    t.insert(t.find("end\n"), std::string(bad) + "\n");
    EXPECT_EQ(calibration_parse(t, "m", "b", c.created, &back, &why), Status::kCorrupt) << bad;
  }
}

}  // namespace
}  // namespace pw::gov
