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
