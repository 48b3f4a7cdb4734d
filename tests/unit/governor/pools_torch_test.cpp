// torch's intra-op count and inter-op pool (governor/pools_torch.h;
// hooks/torch.cpp asks).
#include "governor/pools_torch.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

// The plan: 2 pools of 3 threads.
PoolContext context(bool governing, bool override_user) {
  PoolContext c;
  c.pools = 2;
  c.threads = 3;
  c.governing = governing;
  c.override_user = override_user;
  return c;
}

TorchFacts facts(bool child, int threads, int interop) {
  TorchFacts f;
  f.forked_child = child;
  f.program_threads = threads;
  f.program_interop = interop;
  return f;
}

TEST(TorchInitDecide, Table) {
  struct Case {
    const char* what;
    bool governing, override_user;
    TorchFacts f;
    int torch_default;
    bool env_set;
    TorchVerdict verdict;
    SettingVerdict setting;
    bool applies, sweep;
    int value;
  };
  const Case kCases[] = {
      {"torch's default gives way to threads per pool", true, false, facts(false, 0, 0), 1, false,
       TorchVerdict::kSetting, SettingVerdict::kApply, true, true, 3},
      {"OMP_NUM_THREADS read by torch: kept, BLAS still swept", true, false, facts(false, 0, 0), 4,
       true, TorchVerdict::kSetting, SettingVerdict::kKeep, false, true, 4},
      {"OMP_NUM_THREADS replaced (OVERRIDE)", true, true, facts(false, 0, 0), 4, true,
       TorchVerdict::kSetting, SettingVerdict::kReplace, true, true, 3},
      {"observe mode: reported, BLAS swept (observed)", false, false, facts(false, 0, 0), 1, false,
       TorchVerdict::kSetting, SettingVerdict::kObserve, false, true, 1},
      {"a C++ program set a count before torch's init: its call decided", true, false,
       facts(false, 2, 0), 1, false, TorchVerdict::kProgramSet, SettingVerdict::kKeep, false, false,
       2},
      {"a count set before init, OVERRIDE: still decided at its call", true, true,
       facts(false, 2, 0), 1, false, TorchVerdict::kProgramSet, SettingVerdict::kReplace, false,
       false, 3},
  };
  for (const Case& c : kCases) {
    const TorchDecision d =
        torch_init_decide(context(c.governing, c.override_user), c.f, c.torch_default, c.env_set);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.setting.verdict, c.setting) << c.what;
    EXPECT_EQ(d.applies(), c.applies) << c.what;
    EXPECT_EQ(d.sweep_blas, c.sweep) << c.what;
    EXPECT_EQ(d.setting.value, c.value) << c.what;
  }
  EXPECT_FALSE(torch_init_decide(PoolContext{}, facts(false, 0, 0), 1, false).sweep_blas)
      << "no plan: nothing to cap the BLAS pools at";
}

TEST(TorchCountDecide, Table) {
  struct Case {
    const char* what;
    bool governing, override_user;
    bool child;
    PoolRole role;
    int n;
    TorchVerdict verdict;
    bool applies;
    int value;
  };
  const Case kCases[] = {
      {"torch.set_num_threads(8) kept", true, false, false, PoolRole::kIntraOp, 8,
       TorchVerdict::kSetting, false, 8},
      {"torch.set_num_threads(8) replaced by threads per pool (OVERRIDE)", true, true, false,
       PoolRole::kIntraOp, 8, TorchVerdict::kSetting, true, 3},
      {"torch.set_num_interop_threads(4) kept", true, false, false, PoolRole::kInterOp, 4,
       TorchVerdict::kSetting, false, 4},
      {"torch.set_num_interop_threads(4) replaced by the pools (OVERRIDE)", true, true, false,
       PoolRole::kInterOp, 4, TorchVerdict::kSetting, true, 2},
      {"a DataLoader worker's set_num_threads(1) stays, even with OVERRIDE", true, true, true,
       PoolRole::kIntraOp, 1, TorchVerdict::kChildKeeps, false, 1},
      {"a forked child's inter-op count stays", true, true, true, PoolRole::kInterOp, 3,
       TorchVerdict::kChildKeeps, false, 3},
      {"observe mode, OVERRIDE: the program's count stays", false, true, false, PoolRole::kIntraOp,
       8, TorchVerdict::kSetting, false, 8},
  };
  for (const Case& c : kCases) {
    const TorchDecision d = torch_count_decide(context(c.governing, c.override_user),
                                               facts(c.child, 0, 0), c.role, c.n);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.applies(), c.applies) << c.what;
    EXPECT_EQ(d.setting.value, c.value) << c.what;
    EXPECT_FALSE(d.sweep_blas) << c.what;
  }
}

TEST(TorchLaunchDecide, Table) {
  struct Case {
    const char* what;
    bool governing;
    TorchFacts f;
    TorchVerdict verdict;
    bool applies;
  };
  const Case kCases[] = {
      {"the first at::launch: the plan's pools", true, facts(false, 0, 0), TorchVerdict::kSetting,
       true},
      {"the program sized the pool: decided at its call", true, facts(false, 0, 4),
       TorchVerdict::kProgramSet, false},
      {"a forked child keeps what it inherited", true, facts(true, 0, 0), TorchVerdict::kChildKeeps,
       false},
      {"a forked child whose parent sized it", true, facts(true, 0, 4), TorchVerdict::kChildKeeps,
       false},
      {"observe mode: reported only", false, facts(false, 0, 0), TorchVerdict::kSetting, false},
  };
  for (const Case& c : kCases) {
    const TorchDecision d = torch_launch_decide(context(c.governing, false), c.f);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.applies(), c.applies) << c.what;
    if (c.applies) {
      EXPECT_EQ(d.setting.value, 2) << c.what;
    }
  }
}

TEST(TorchOmpCountIsUsers, Table) {
  struct Case {
    const char* what;
    bool override_user;
    TorchFacts f;
    bool users;
  };
  const Case kCases[] = {
      {"torch's own default passed on: the team cap may follow", false, facts(false, 0, 0), false},
      {"the program's count passed on, kept: the user's", false, facts(false, 8, 0), true},
      {"the program's count replaced (OVERRIDE): the plan's, not the user's", true,
       facts(false, 8, 0), false},
      {"a forked worker's count: the user's", false, facts(true, 0, 0), true},
      {"a forked worker's count under OVERRIDE: still the user's", true, facts(true, 1, 0), true},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(torch_omp_count_is_users(context(true, c.override_user), c.f), c.users) << c.what;
}

}  // namespace
}  // namespace pw::gov
