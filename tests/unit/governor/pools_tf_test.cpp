// TensorFlow's ConfigProto fields and its pools' threads (governor/pools_tf.h;
// hooks/tf.cpp asks).
#include "governor/pools_tf.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

TEST(TfKnobDecide, Table) {
  struct Case {
    const char* what;
    TfKnob knob;
    int config, env;
    bool graph_known, pools_given, share_expected, governing, override_user;
    TfKnobVerdict verdict;
    TfUserSource user;
    int value;  // the field written (0 where nothing is written)
  };
  constexpr TfKnob kInter = TfKnob::kInterOp;
  constexpr TfKnob kIntra = TfKnob::kIntraOp;
  // The plan: 2 pools of 3 threads.
  const Case kCases[] = {
      {"intra-op at TF's default: threads per pool", kIntra, 0, 0, false, false, false, true, false,
       TfKnobVerdict::kPlan, TfUserSource::kNone, 3},
      {"inter-op with a graph: the plan's pools", kInter, 0, 0, true, false, false, true, false,
       TfKnobVerdict::kPlan, TfUserSource::kNone, 2},
      {"inter-op with PARWIDTH_POOLS: the plan's pools", kInter, 0, 0, false, true, false, true,
       false, TfKnobVerdict::kPlan, TfUserSource::kNone, 2},
      {"inter-op without a graph: TF's default stays", kInter, 0, 0, false, false, false, true,
       false, TfKnobVerdict::kTfDefault, TfUserSource::kNone, 0},
      {"inter-op without a graph, share expected: TF's rule on the share", kInter, 0, 0, false,
       false, true, true, false, TfKnobVerdict::kTfDefaultOnShare, TfUserSource::kNone, 6},
      {"intra-op without a graph: threads per pool all the same", kIntra, 0, 0, false, false, true,
       true, false, TfKnobVerdict::kPlan, TfUserSource::kNone, 3},
      {"the program's ConfigProto value kept", kIntra, 8, 0, true, false, false, true, false,
       TfKnobVerdict::kKeep, TfUserSource::kConfig, 0},
      {"TF_NUM_INTEROP_THREADS kept", kInter, 0, 4, true, false, false, true, false,
       TfKnobVerdict::kKeep, TfUserSource::kEnv, 0},
      {"the ConfigProto beats TF_NUM_*", kInter, 5, 4, true, false, false, true, false,
       TfKnobVerdict::kKeep, TfUserSource::kConfig, 0},
      {"the ConfigProto value replaced (OVERRIDE)", kIntra, 8, 0, true, false, false, true, true,
       TfKnobVerdict::kPlan, TfUserSource::kConfig, 3},
      {"TF_NUM_INTEROP_THREADS replaced (OVERRIDE), even without a graph", kInter, 0, 4, false,
       false, false, true, true, TfKnobVerdict::kPlan, TfUserSource::kEnv, 2},
      {"observe mode: nothing written", kIntra, 0, 0, true, false, false, false, false,
       TfKnobVerdict::kUnchanged, TfUserSource::kNone, 0},
      {"observe mode: the user's value is still kept", kInter, 4, 0, true, false, false, false,
       false, TfKnobVerdict::kKeep, TfUserSource::kConfig, 0},
  };
  for (const Case& c : kCases) {
    PoolContext ctx;
    ctx.pools = 2;
    ctx.threads = 3;
    ctx.governing = c.governing;
    ctx.override_user = c.override_user;
    TfKnobFacts f;
    f.knob = c.knob;
    f.config = c.config;
    f.env = c.env;
    f.graph_known = c.graph_known;
    f.pools_given = c.pools_given;
    f.share_expected = c.share_expected;
    const TfKnobDecision d = tf_knob_decide(ctx, f);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.user, c.user) << c.what;
    EXPECT_EQ(d.user_value, c.config > 0 ? c.config : c.env) << c.what;
    EXPECT_EQ(d.writes() ? d.value : 0, c.value) << c.what;
    EXPECT_EQ(d.plan, c.knob == kInter ? 2 : 3) << c.what;
  }
}

TEST(TfKnobDecide, NoPlanWritesNothing) {
  TfKnobFacts f;
  f.knob = TfKnob::kInterOp;
  f.graph_known = true;
  const TfKnobDecision d = tf_knob_decide(PoolContext{}, f);
  EXPECT_EQ(d.verdict, TfKnobVerdict::kUnchanged);
  EXPECT_EQ(d.setting.verdict, SettingVerdict::kNoPlan);
}

// TensorFlow's inter-op pool without a graph.
TEST(TfInteropDefaultKept, Table) {
  struct Case {
    const char* what;
    bool user_set, graph_known, pools_given;
    int threads;
    bool kept;
  };
  const Case kCases[] = {
      {"no graph, no PARWIDTH_POOLS: TensorFlow's default", false, false, false, 2, true},
      {"a graph known: the plan's pools", false, true, false, 2, false},
      {"PARWIDTH_POOLS given: the plan's pools", false, false, true, 2, false},
      {"the user's value: the setting decision decides", true, false, false, 2, false},
      {"graph and pools", false, true, true, 2, false},
      {"a share of one core's worth: the default can only oversubscribe", false, false, false, 1,
       false},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(tf_interop_default_kept(c.user_set, c.graph_known, c.pools_given, c.threads), c.kept)
        << c.what;
}

TEST(TfPoolOf, Table) {
  struct Case {
    const char* name;
    TfPool want;
  };
  const Case kCases[] = {
      {"Compute", TfPool::kInterOp},       {"inter_op_pool", TfPool::kInterOp},
      {"numa_-1_Eigen", TfPool::kIntraOp}, {"numa_0_Eigen", TfPool::kIntraOp},
      {"intra_op_pool", TfPool::kIntraOp}, {"tf_data_private_threadpool", TfPool::kOther},
      {"ComputeX", TfPool::kOther},        {"", TfPool::kOther},
  };
  for (const Case& c : kCases) EXPECT_EQ(tf_pool_of(c.name), c.want) << c.name;
}

TEST(TfPoolStart, Table) {
  struct Case {
    const char* what;
    TfPool pool;
    bool governing, pin_off;
    bool noted, pinned;
  };
  const Case kCases[] = {
      {"the inter-op pool: noted, dealt, pinned", TfPool::kInterOp, true, false, true, true},
      {"the intra-op pool: noted, dealt, pinned", TfPool::kIntraOp, true, false, true, true},
      {"tf.data's pool: dealt and pinned, not noted", TfPool::kOther, true, false, false, true},
      {"PARWIDTH_PIN=none: dealt, not pinned", TfPool::kInterOp, true, true, true, false},
      {"observe mode: noted, not pinned", TfPool::kIntraOp, false, false, true, false},
  };
  for (const Case& c : kCases) {
    PoolContext ctx;
    ctx.pools = 2;
    ctx.threads = 1;
    ctx.governing = c.governing;
    ctx.pin_off = c.pin_off;
    const TfPoolStart s = tf_pool_start(ctx, c.pool);
    EXPECT_EQ(s.placement, WorkerPlacement::kDealt) << c.what;
    EXPECT_EQ(s.noted, c.noted) << c.what;
    EXPECT_EQ(s.pinned, c.pinned) << c.what;
  }
}

}  // namespace
}  // namespace pw::gov
