// governor/setting: the keep / apply / replace decision for a runtime's thread setting.
#include "governor/setting.h"

namespace pw::gov {

SettingDecision setting_decide(const SettingInput& in) {
  SettingDecision d;
  d.value = in.current;
  if (in.plan <= 0) {
    d.verdict = SettingVerdict::kNoPlan;
  } else if (in.user_set && !in.override_user) {
    d.verdict = SettingVerdict::kKeep;
  } else if (!in.governing) {
    d.verdict = SettingVerdict::kObserve;
  } else if (in.user_set && in.kind == SettingKind::kCeiling && in.current > 0 &&
             in.current <= in.plan) {
    d.verdict = SettingVerdict::kBelow;
  } else if (in.user_set) {
    // A replacement, not min(user, plan): a smaller count is also the user's guess.
    d.verdict = SettingVerdict::kReplace;
    d.value = in.plan;
  } else if (in.kind != SettingKind::kSet && in.current > 0 && in.current <= in.plan) {
    d.verdict = SettingVerdict::kBelow;
  } else {
    d.verdict = SettingVerdict::kApply;
    d.value = in.plan;
  }
  return d;
}

const char* setting_verdict_text(SettingVerdict v) {
  switch (v) {
    case SettingVerdict::kApply:
      return "set from the plan";
    case SettingVerdict::kReplace:
      return "the user's setting replaced by the plan's (PARWIDTH_OVERRIDE=1)";
    case SettingVerdict::kKeep:
      return "set by the user; kept (PARWIDTH_OVERRIDE=1 replaces it)";
    case SettingVerdict::kBelow:
      return "already within the plan's cap; left as it is";
    case SettingVerdict::kObserve:
      return "observe mode: not changed";
    case SettingVerdict::kNoPlan:
      return "no plan value; left as it is";
  }
  return "";
}

}  // namespace pw::gov
