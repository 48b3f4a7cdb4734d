// The keep / apply / replace table for runtime thread settings (governor/setting.h).
#include <gtest/gtest.h>

#include "governor/setting.h"

namespace pw::gov {
namespace {

struct Row {
  const char* what;
  SettingKind kind;
  int plan, current;
  bool user_set, governing, override_user;
  SettingVerdict verdict;
  int value;
};

constexpr SettingKind kSet = SettingKind::kSet;
constexpr SettingKind kCap = SettingKind::kCap;
constexpr SettingKind kCeiling = SettingKind::kCeiling;

const Row kRows[] = {
    // the runtime's default gives way to the plan
    {"session option at its default", kSet, 2, 0, false, true, false, SettingVerdict::kApply, 2},
    {"set kind raises a small default", kSet, 4, 1, false, true, false, SettingVerdict::kApply, 4},
    {"BLAS pool of every CPU capped", kCap, 1, 2, false, true, false, SettingVerdict::kApply, 1},
    {"BLAS pool of unknown size capped", kCap, 3, 0, false, true, false, SettingVerdict::kApply, 3},
    {"BLAS pool already small: left", kCap, 4, 1, false, true, false, SettingVerdict::kBelow, 1},
    {"BLAS pool exactly the plan: left", kCap, 2, 2, false, true, false, SettingVerdict::kBelow, 2},
    // the user's explicit choice
    {"user's value kept", kSet, 2, 8, true, true, false, SettingVerdict::kKeep, 8},
    {"user's small cap kept", kCap, 2, 1, true, true, false, SettingVerdict::kKeep, 1},
    {"user's value replaced (OVERRIDE)", kSet, 2, 8, true, true, true, SettingVerdict::kReplace, 2},
    {"user's smaller value replaced too", kCap, 2, 1, true, true, true, SettingVerdict::kReplace,
     2},
    {"override without a user value: plain apply", kCap, 1, 2, false, true, true,
     SettingVerdict::kApply, 1},
    // observe mode and no plan
    {"observe: default reported", kSet, 2, 0, false, false, false, SettingVerdict::kObserve, 0},
    {"observe: cap reported", kCap, 1, 2, false, false, true, SettingVerdict::kObserve, 2},
    {"observe: user's value is still the user's", kSet, 2, 8, true, false, false,
     SettingVerdict::kKeep, 8},
    {"no plan value", kSet, 0, 3, false, true, false, SettingVerdict::kNoPlan, 3},
    {"no plan value, user set", kCap, 0, 3, true, true, true, SettingVerdict::kNoPlan, 3},
    // OpenMP (hooks/omp.cpp). A region's master: the team cap (plan = the cap,
    // current unknown) unless the program set this thread's count.
    {"omp region: cap applied", kSet, 2, 0, false, true, false, SettingVerdict::kApply, 2},
    {"omp region: the thread's own count kept", kSet, 2, 0, true, true, false,
     SettingVerdict::kKeep, 0},
    {"omp region: own count replaced (OVERRIDE)", kSet, 2, 0, true, true, true,
     SettingVerdict::kReplace, 2},
    {"omp region: no cap (observe mode, or the user's OMP_NUM_THREADS)", kSet, 0, 0, false, true,
     false, SettingVerdict::kNoPlan, 0},
    // omp_set_num_threads(n) against the cap: only OVERRIDE lowers it, and only
    // when it asks for more.
    {"omp_set_num_threads above the cap kept", kCeiling, 2, 8, true, true, false,
     SettingVerdict::kKeep, 8},
    {"omp_set_num_threads above the cap lowered (OVERRIDE)", kCeiling, 2, 8, true, true, true,
     SettingVerdict::kReplace, 2},
    {"omp_set_num_threads within the cap stays (OVERRIDE)", kCeiling, 2, 1, true, true, true,
     SettingVerdict::kBelow, 1},
    {"omp_set_num_threads equal to the cap stays (OVERRIDE)", kCeiling, 2, 2, true, true, true,
     SettingVerdict::kBelow, 2},
    {"omp_set_num_threads without a cap passes", kCeiling, 0, 8, true, true, true,
     SettingVerdict::kNoPlan, 8},
    // torch.set_num_threads(n) again with the same n: the same decision
    {"torch count repeated: kept", kSet, 2, 4, true, true, false, SettingVerdict::kKeep, 4},
    {"torch count repeated: replaced (OVERRIDE)", kSet, 2, 4, true, true, true,
     SettingVerdict::kReplace, 2},
    {"torch count repeated, observe mode (OVERRIDE)", kSet, 2, 4, true, false, true,
     SettingVerdict::kObserve, 4},
};

TEST(SettingDecide, Table) {
  for (const Row& r : kRows) {
    SettingInput in;
    in.kind = r.kind;
    in.plan = r.plan;
    in.current = r.current;
    in.user_set = r.user_set;
    in.governing = r.governing;
    in.override_user = r.override_user;
    const SettingDecision d = setting_decide(in);
    EXPECT_EQ(d.verdict, r.verdict) << r.what;
    EXPECT_EQ(d.value, r.value) << r.what;
    EXPECT_EQ(d.changes(),
              r.verdict == SettingVerdict::kApply || r.verdict == SettingVerdict::kReplace)
        << r.what;
    EXPECT_NE(std::string(setting_verdict_text(d.verdict)), "") << r.what;
  }
}

}  // namespace
}  // namespace pw::gov
