// Which of the plan's numbers a pool's knob gets, and its apply / keep /
// replace decision on it (governor/pools.h: the core every runtime's pool
// decision is built on).
#include "governor/pools.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

TEST(PoolKnobDecide, Table) {
  struct Case {
    const char* what;
    PoolRole role;
    SettingKind kind;
    int current;
    bool user_set, governing, override_user;
    SettingVerdict verdict;
    int value;
  };
  // The plan: 3 pools of 2 threads; the OpenMP cap lowered to 1 by the monitor.
  const Case kCases[] = {
      {"intra-op pool at its default: threads per pool", PoolRole::kIntraOp, SettingKind::kSet, 0,
       false, true, false, SettingVerdict::kApply, 2},
      {"inter-op pool at its default: the plan's pools", PoolRole::kInterOp, SettingKind::kSet, 0,
       false, true, false, SettingVerdict::kApply, 3},
      {"an OpenMP team: the cap in force, not the plan's threads", PoolRole::kOmpTeam,
       SettingKind::kSet, 0, false, true, false, SettingVerdict::kApply, 1},
      {"a BLAS pool of every CPU capped at threads per pool", PoolRole::kIntraOp, SettingKind::kCap,
       8, false, true, false, SettingVerdict::kApply, 2},
      {"a BLAS pool within the cap stays", PoolRole::kIntraOp, SettingKind::kCap, 1, false, true,
       false, SettingVerdict::kBelow, 1},
      {"the user's inter-op count kept", PoolRole::kInterOp, SettingKind::kSet, 8, true, true,
       false, SettingVerdict::kKeep, 8},
      {"the user's inter-op count replaced (OVERRIDE)", PoolRole::kInterOp, SettingKind::kSet, 8,
       true, true, true, SettingVerdict::kReplace, 3},
      {"omp_set_num_threads above the cap lowered (OVERRIDE)", PoolRole::kOmpTeam,
       SettingKind::kCeiling, 4, true, true, true, SettingVerdict::kReplace, 1},
      {"observe mode", PoolRole::kIntraOp, SettingKind::kSet, 0, false, false, false,
       SettingVerdict::kObserve, 0},
  };
  PoolContext ctx;
  ctx.pools = 3;
  ctx.threads = 2;
  ctx.omp_cap = 1;
  for (const Case& c : kCases) {
    PoolContext x = ctx;
    x.governing = c.governing;
    x.override_user = c.override_user;
    PoolKnob k;
    k.role = c.role;
    k.kind = c.kind;
    k.current = c.current;
    k.user_set = c.user_set;
    const SettingDecision d = pool_knob_decide(x, k);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.value, c.value) << c.what;
  }
}

TEST(PoolPlanValue, NoPlanSaysNothing) {
  const PoolContext none;
  for (PoolRole r : {PoolRole::kIntraOp, PoolRole::kInterOp, PoolRole::kOmpTeam}) {
    EXPECT_EQ(pool_plan_value(none, r), 0);
    PoolKnob k;
    k.role = r;
    EXPECT_EQ(pool_knob_decide(none, k).verdict, SettingVerdict::kNoPlan);
  }
}

}  // namespace
}  // namespace pw::gov
