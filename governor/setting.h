// governor/setting: whether a runtime's thread setting is set from the plan,
// kept as the program made it, or only reported (observe mode).
//
// One decision for every thread count parwidth sizes through a runtime's own
// knob (OpenMP's team size, torch's and TensorFlow's thread counts, a BLAS
// library's pool, an ONNX Runtime session option): the hooks find the facts,
// this function decides, the hooks apply and report. Pure: values in, values out.
#pragma once

namespace pw::gov {

enum class SettingKind {
  kSet,  // the plan's value replaces the runtime's default (a session option)
  kCap,  // the plan's value is an upper bound: a smaller default stays (a BLAS pool)
  // An upper bound even over the user's choice: under PARWIDTH_OVERRIDE=1 a
  // larger user value is lowered to the plan's, a smaller one stays
  // (omp_set_num_threads(n) against the team cap).
  kCeiling,
};

struct SettingInput {
  SettingKind kind = SettingKind::kSet;
  int plan = 0;                // the plan's value; <= 0: the plan has none
  int current = 0;             // the runtime's value now; <= 0: unknown
  bool user_set = false;       // the program or its user chose `current` (env, call, option)
  bool governing = true;       // false: observe mode, nothing changes
  bool override_user = false;  // PARWIDTH_OVERRIDE=1
};

enum class SettingVerdict {
  kApply,    // set to `value` (the plan's; the runtime's default was not the user's)
  kReplace,  // set to `value` over the user's explicit choice (PARWIDTH_OVERRIDE=1)
  kKeep,     // the user's explicit choice stands
  kBelow,    // a cap that the runtime's value already meets: left as it is
  kObserve,  // observe mode: reported, not changed
  kNoPlan,   // the plan says nothing about it: left as it is
};

struct SettingDecision {
  SettingVerdict verdict = SettingVerdict::kNoPlan;
  int value = 0;  // the value in force afterwards (current when nothing changes)
  bool changes() const {
    return verdict == SettingVerdict::kApply || verdict == SettingVerdict::kReplace;
  }
};

SettingDecision setting_decide(const SettingInput& in);

// A short phrase for the report ("set by the user; kept (PARWIDTH_OVERRIDE=1
// replaces it)", ...).
const char* setting_verdict_text(SettingVerdict v);

}  // namespace pw::gov
