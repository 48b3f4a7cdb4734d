// BLAS pools: the cap, which pools follow later plans, and their size then
// (governor/pools_blas.h; hooks/blas.cpp asks).
#include "governor/pools_blas.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

PoolContext context(int threads, bool governing, bool override_user) {
  PoolContext c;
  c.pools = 1;
  c.threads = threads;
  c.governing = governing;
  c.override_user = override_user;
  return c;
}

TEST(BlasPoolDecide, Table) {
  struct Case {
    const char* what;
    int threads;
    bool governing, override_user;
    int count, unset;
    bool user_set;
    SettingVerdict verdict;
    int after, before;
    bool follows;
  };
  const Case kCases[] = {
      {"OpenBLAS made a thread per CPU: capped, follows", 2, true, false, 8, 0, false,
       SettingVerdict::kApply, 2, 8, true},
      {"MKL already at the cap: left, follows", 2, true, false, 2, 0, false, SettingVerdict::kBelow,
       2, 2, true},
      {"a smaller default stays and follows (never above it)", 4, true, false, 1, 0, false,
       SettingVerdict::kBelow, 1, 1, true},
      {"BLIS without a count runs one thread: left, follows", 2, true, false, -1, 1, false,
       SettingVerdict::kBelow, 1, 1, true},
      {"a count that cannot be read: capped", 2, true, false, 0, 0, false, SettingVerdict::kApply,
       2, 0, true},
      {"OPENBLAS_NUM_THREADS: the user's, stays, does not follow", 2, true, false, 8, 0, true,
       SettingVerdict::kKeep, 8, 8, false},
      {"the user's count replaced (OVERRIDE): parwidth's now, follows", 2, true, true, 8, 0, true,
       SettingVerdict::kReplace, 2, 8, true},
      {"observe mode: reported, never follows", 2, false, false, 8, 0, false,
       SettingVerdict::kObserve, 8, 8, false},
      {"no plan: left, never follows", 0, true, false, 8, 0, false, SettingVerdict::kNoPlan, 8, 8,
       false},
  };
  for (const Case& c : kCases) {
    BlasPoolFacts f;
    f.count = c.count;
    f.unset = c.unset;
    f.user_set = c.user_set;
    const BlasPoolDecision d =
        blas_pool_decide(context(c.threads, c.governing, c.override_user), f);
    EXPECT_EQ(d.setting.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.setting.value, c.after) << c.what;
    EXPECT_EQ(d.before, c.before) << c.what;
    EXPECT_EQ(d.follows, c.follows) << c.what;
  }
}

TEST(BlasFollowSize, Table) {
  struct Case {
    const char* what;
    int threads, before, want;
  };
  const Case kCases[] = {
      {"a smaller share: the plan's threads", 1, 8, 1},
      {"a larger share: up to the library's own size", 16, 8, 8},
      {"the library's own size exactly", 8, 8, 8},
      {"the library's size unknown: the plan's", 4, 0, 4},
      {"BLIS's one thread stays one", 2, 1, 1},
  };
  for (const Case& c : kCases) EXPECT_EQ(blas_follow_size(c.threads, c.before), c.want) << c.what;
}

// Cores shared by time with other servers: a BLAS pool keeps to the team's
// worth, as an OpenMP team does, whatever the plan's threads per pool.
TEST(BlasTeamCap, Table) {
  struct Case {
    const char* what;
    int threads, team_cap, count, after;
  };
  const Case kCases[] = {
      {"two servers on four cores: the plan's 4, the pool 2", 4, 2, 4, 2},
      {"not time-shared: the plan's", 4, 0, 8, 4},
      {"a team's worth above the plan's threads: the plan's", 2, 4, 8, 2},
      {"a smaller default stays", 4, 2, 1, 1},
  };
  for (const Case& c : kCases) {
    PoolContext ctx = context(c.threads, true, false);
    ctx.team_cap = c.team_cap;
    BlasPoolFacts f;
    f.count = c.count;
    EXPECT_EQ(blas_pool_decide(ctx, f).setting.value, c.after) << c.what;
    EXPECT_EQ(blas_follow_size(blas_cap_threads(c.threads, c.team_cap), c.count), c.after)
        << c.what;
  }
  PoolContext ctx = context(4, true, true);
  ctx.team_cap = 2;
  EXPECT_EQ(blas_call_decide(ctx, 8).value, 2) << "a replaced call: the team's worth";
}

TEST(BlasCallDecide, Table) {
  struct Case {
    const char* what;
    bool governing, override_user;
    int n;
    SettingVerdict verdict;
    int value;
  };
  const Case kCases[] = {
      {"openblas_set_num_threads(8) kept", true, false, 8, SettingVerdict::kKeep, 8},
      {"openblas_set_num_threads(8) replaced (OVERRIDE)", true, true, 8, SettingVerdict::kReplace,
       2},
      {"a smaller count replaced too (OVERRIDE): the plan's", true, true, 1,
       SettingVerdict::kReplace, 2},
      {"observe mode: the call's own count", false, false, 8, SettingVerdict::kKeep, 8},
  };
  for (const Case& c : kCases) {
    const SettingDecision d = blas_call_decide(context(2, c.governing, c.override_user), c.n);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.value, c.value) << c.what;
  }
}

}  // namespace
}  // namespace pw::gov
