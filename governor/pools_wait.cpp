// governor/pools_wait: bounded waits for every pool's idle threads (see the header).
#include "governor/pools_wait.h"

namespace pw::gov {

namespace {

long bounded(WaitKnob k) {
  switch (k) {
    case WaitKnob::kGompSpinCount:
      return kGompSpinCount;
    case WaitKnob::kKmpBlocktime:
      return kKmpBlocktimeMs;
    case WaitKnob::kOpenblasTimeout:
      return kOpenblasTimeoutLog2;
    case WaitKnob::kTfSpinning:
      return 0;
  }
  return 0;
}

}  // namespace

WaitDecision wait_decide(const PoolContext& c, const WaitFacts& f) {
  WaitDecision d;
  if (f.user_set && !c.override_user) {
    d.verdict = WaitVerdict::kKeep;
  } else if (!f.open) {
    d.verdict = WaitVerdict::kLate;
  } else if (!c.governing) {
    d.verdict = WaitVerdict::kObserve;
  } else if (f.knob == WaitKnob::kTfSpinning && !f.node_may_share) {
    // TensorFlow's two pools take turns with each other by design (an operator's
    // shards on the intra-op pool inside the inter-op pool's work), and its spin
    // is short; only a neighbour's cores make it cost someone else.
    d.verdict = WaitVerdict::kAlone;
  } else {
    d.verdict = f.user_set ? WaitVerdict::kReplace : WaitVerdict::kBound;
    d.value = bounded(f.knob);
  }
  return d;
}

const char* wait_verdict_text(WaitVerdict v) {
  switch (v) {
    case WaitVerdict::kBound:
      return "bounded by parwidth: idle threads spin briefly, then sleep, so that pools taking "
             "turns on the same cores leave them to each other";
    case WaitVerdict::kReplace:
      return "the user's setting replaced by the bounded wait (PARWIDTH_OVERRIDE=1)";
    case WaitVerdict::kKeep:
      return "set by the user; kept (PARWIDTH_OVERRIDE=1 replaces it)";
    case WaitVerdict::kLate:
      return "the runtime read its setting before parwidth loaded (linked into the program): its "
             "own wait stands";
    case WaitVerdict::kObserve:
      return "observe mode: not changed";
    case WaitVerdict::kAlone:
      return "alone on its node (no node registry, no launcher's neighbours): its own short "
             "spin stands";
  }
  return "";
}

const char* wait_default_text(WaitKnob k) {
  switch (k) {
    case WaitKnob::kGompSpinCount:
      return "libgomp's default: idle team threads spin 300000 iterations, then sleep";
    case WaitKnob::kKmpBlocktime:
      return "the runtime's default: idle team threads spin 200 ms, then sleep";
    case WaitKnob::kOpenblasTimeout:
      return "OpenBLAS's default: idle workers spin about 2^28 time-stamp ticks, then sleep";
    case WaitKnob::kTfSpinning:
      return "TensorFlow's default: idle pool threads spin briefly, then sleep";
  }
  return "";
}

}  // namespace pw::gov
