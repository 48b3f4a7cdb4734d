// The stored measured plan's file: a round trip; corrupt, truncated, foreign,
// other-budget, other-graph and future-dated files are refused with a reason;
// a parsed plan decides before the model and the width rule.
#include <gtest/gtest.h>

#include "governor/plan_source.h"
#include "governor/plan_store.h"

namespace pw::gov {
namespace {

constexpr int64_t kNow = 1'800'000'000;
const char kMachine[] = "Test CPU | 1 sockets 2 cores 2 pus";
const char kBudget[] = "cpus 0-1 quota none";
const char kGraph[] = "0123456789abcdef";

StoredPlan sample() {
  StoredPlan s;
  s.machine = kMachine;
  s.budget = kBudget;
  s.graph = kGraph;
  s.plan.pools = 1;
  s.plan.threads = 2;
  s.plan.seconds = 0.25;
  s.plan.min = 0.2;
  s.plan.max = 0.3;
  s.plan.runs = 8;
  s.plan.created = kNow - 3600;
  s.plan.by = "tune";
  s.plan.version = "0.1.0";
  s.plan.metric = "wall seconds";
  return s;
}

Status parse(const std::string& text, StoredPlan* out, std::string* why) {
  return plan_file_parse(text, kMachine, kBudget, kGraph, kNow, out, why);
}

TEST(PlanStore, RoundTrip) {
  const std::string text = plan_file_format(sample());
  StoredPlan s;
  std::string why;
  ASSERT_EQ(parse(text, &s, &why), Status::kOk) << why;
  EXPECT_TRUE(s.plan.known);
  EXPECT_EQ(s.graph, kGraph);
  EXPECT_EQ(s.plan.pools, 1);
  EXPECT_EQ(s.plan.threads, 2);
  EXPECT_DOUBLE_EQ(s.plan.seconds, 0.25);
  EXPECT_DOUBLE_EQ(s.plan.min, 0.2);
  EXPECT_DOUBLE_EQ(s.plan.max, 0.3);
  EXPECT_EQ(s.plan.runs, 8);
  EXPECT_EQ(s.plan.created, kNow - 3600);
  EXPECT_EQ(s.plan.by, "tune");
  EXPECT_EQ(s.plan.version, "0.1.0");
  EXPECT_EQ(s.plan.metric, "wall seconds");
  // The one line a report and `parwidth plans` show: who, when, how many runs.
  EXPECT_EQ(s.plan.how, "parwidth tune, 2027-01-15 07:00 UTC, 8 runs, median 0.25 s (spread 40%)");
  EXPECT_EQ(plan_file_format(s), text);
}

TEST(PlanStore, SweepSaveAndAMetricPatternRoundTrip) {
  StoredPlan in = sample();
  in.plan.by = "sweep --save";
  in.plan.metric = "time per iteration: ([0-9.]+) ms";
  StoredPlan s;
  std::string why;
  ASSERT_EQ(parse(plan_file_format(in), &s, &why), Status::kOk) << why;
  EXPECT_EQ(s.plan.by, "sweep --save");
  EXPECT_EQ(s.plan.metric, in.plan.metric);
  EXPECT_NE(s.plan.how.find("parwidth sweep --save,"), std::string::npos);
  EXPECT_NE(s.plan.how.find("(--metric)"), std::string::npos);
  // A newline in a value cannot inject a key: it becomes a space.
  in.plan.metric = "x\npools 7";
  ASSERT_EQ(parse(plan_file_format(in), &s, &why), Status::kOk) << why;
  EXPECT_EQ(s.plan.pools, 1);
  EXPECT_EQ(s.plan.metric, "x pools 7");
}

TEST(PlanStore, TruncatedAtEveryLengthIsCorrupt) {
  const std::string text = plan_file_format(sample());
  for (size_t n = 0; n < text.size(); ++n) {
    StoredPlan s;
    std::string why;
    EXPECT_EQ(parse(text.substr(0, n), &s, &why), Status::kCorrupt) << n;
    EXPECT_FALSE(why.empty());
    EXPECT_FALSE(s.plan.known);
  }
}

TEST(PlanStore, EachBadValueIsCorrupt) {
  const std::string good = plan_file_format(sample());
  auto with = [&](const std::string& line, const std::string& replacement) {
    const size_t at = good.find("\n" + line + "\n");
    EXPECT_NE(at, std::string::npos) << line;
    std::string t = good;
    t.replace(at + 1, line.size(), replacement);
    return t;
  };
  const std::pair<std::string, std::string> cases[] = {
      {"pools 1", "pools 0"},
      {"pools 1", "pools x"},
      {"pools 1", "pools 1.5"},
      {"intra 2", "intra 5000"},
      {"intra 2", "intra -1"},
      {"runs 8", "runs 0"},
      {"median 0.25", "median nan"},
      {"median 0.25", "median -1"},
      {"median 0.25", "median 0.5"},  // outside [min, max]
      {"min 0.2", "min inf"},
      {"created 1799996400", "created soon"},
      {"by tune", "by hand"},
      {"graph 0123456789abcdef", "graph "},
      {"pools 1", "pools 1\npools 2"},  // twice
      {"runs 8", "runs"},               // no value
      {"max 0.3", "max 0.3\nend"},      // text after end
  };
  for (const auto& [line, bad] : cases) {
    StoredPlan s;
    std::string why;
    EXPECT_EQ(parse(with(line, bad), &s, &why), Status::kCorrupt) << bad;
  }
  for (const char* key : {"machine", "budget", "graph", "created", "by", "version", "metric",
                          "pools", "intra", "runs", "median", "min", "max"}) {
    std::string t = good;
    const size_t at = t.find(std::string("\n") + key + " ");
    ASSERT_NE(at, std::string::npos) << key;
    t.erase(at + 1, t.find('\n', at + 1) - at);
    StoredPlan s;
    std::string why;
    EXPECT_EQ(parse(t, &s, &why), Status::kCorrupt) << key;
    EXPECT_NE(why.find(key), std::string::npos) << why;
  }
  StoredPlan s;
  std::string why;
  EXPECT_EQ(parse("parwidth-calibration 1\n", &s, &why), Status::kCorrupt);
  EXPECT_EQ(parse(std::string(kPlanFileMaxBytes + 1, '\n'), &s, &why), Status::kCorrupt);
  // An unknown key (a later version's) is skipped.
  EXPECT_EQ(parse(with("runs 8", "runs 8\nnew_key 1"), &s, &why), Status::kOk) << why;
}

TEST(PlanStore, OtherMachineBudgetGraphAndFuture) {
  StoredPlan in = sample();
  StoredPlan s;
  std::string why;
  const std::string text = plan_file_format(in);
  EXPECT_EQ(
      plan_file_parse(text, "Other CPU | 1 sockets 2 cores 2 pus", kBudget, kGraph, kNow, &s, &why),
      Status::kOtherMachine);
  EXPECT_NE(why.find("Test CPU"), std::string::npos);
  EXPECT_EQ(plan_file_parse(text, kMachine, "cpus 0 quota none", kGraph, kNow, &s, &why),
            Status::kOtherBudget);
  EXPECT_EQ(plan_file_parse(text, kMachine, kBudget, "fedcba9876543210", kNow, &s, &why),
            Status::kOtherGraph);
  // Empty expectations skip the check (the listing of `parwidth plans`).
  EXPECT_EQ(plan_file_parse(text, "", "", "", kNow, &s, &why), Status::kOk) << why;
  // Old measurements stay valid; one dated more than a day ahead is not trusted.
  in.plan.created = kNow - 400LL * 24 * 3600;
  EXPECT_EQ(parse(plan_file_format(in), &s, &why), Status::kOk) << why;
  in.plan.created = kNow + 2 * 24 * 3600;
  EXPECT_EQ(parse(plan_file_format(in), &s, &why), Status::kCorrupt);
  EXPECT_NE(why.find("future"), std::string::npos);
}

BudgetView two_cores() {
  BudgetView b;
  for (int c = 0; c < 2; ++c) b.cores.push_back({0, {c}});
  return b;
}

// The choice order with a parsed file: measured, then model, then width; the
// user's counts above all.
TEST(PlanStore, ParsedPlanDecidesBeforeModelAndWidth) {
  StoredPlan s;
  std::string why;
  ASSERT_EQ(parse(plan_file_format(sample()), &s, &why), Status::kOk) << why;
  CostGraph g;
  g.ops.resize(2);
  for (auto& o : g.ops) o.flops = 1e6;
  const MachineModel m = builtin_model(2);
  PlanInputs in;
  in.width.known = true;
  in.width.avg_width = 2;
  in.width.max_level_width = 2;
  in.costs = &g;
  in.model = &m;
  in.measured = s.plan;
  Plan p = plan_choose(two_cores(), in, {});
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.source_detail, s.plan.how);
  EXPECT_TRUE(p.measured.known);
  EXPECT_EQ(p.measured.runs, 8);
  EXPECT_TRUE(p.predicted.empty());
  // Not stored (or refused): the model.
  in.measured = {};
  p = plan_choose(two_cores(), in, {});
  EXPECT_EQ(p.source, "model");
  EXPECT_FALSE(p.measured.known);
  // No costs either: the width rule (W = 2 -> 2 x 1).
  in.costs = nullptr;
  p = plan_choose(two_cores(), in, {});
  EXPECT_EQ(p.source, "width");
  EXPECT_EQ(p.pools, 2);
  // PARWIDTH_PLAN=model and width skip a stored plan; the user's counts win.
  in.costs = &g;
  in.measured = s.plan;
  in.mode = PlanMode::kModel;
  EXPECT_EQ(plan_choose(two_cores(), in, {}).source, "model");
  in.mode = PlanMode::kWidth;
  EXPECT_EQ(plan_choose(two_cores(), in, {}).source, "width");
  in.mode = PlanMode::kAuto;
  PlanOptions user;
  user.pools = 2;
  EXPECT_EQ(plan_choose(two_cores(), in, user).source, "user");
}

}  // namespace
}  // namespace pw::gov
