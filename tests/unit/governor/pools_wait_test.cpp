// How a pool's idle threads wait (governor/pools_wait.h): bounded waits for every
// runtime a program did not size itself, the user's setting kept, a runtime that
// read its setting before parwidth keeping its own.
#include "governor/pools_wait.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

TEST(WaitDecide, Table) {
  struct Case {
    const char* what;
    WaitKnob knob;
    bool governing, override_user, user_set, open, node_may_share;
    WaitVerdict verdict;
    long value;
  };
  using K = WaitKnob;
  using V = WaitVerdict;
  const Case kCases[] = {
      {"libgomp loaded after parwidth", K::kGompSpinCount, true, false, false, true, false,
       V::kBound, kGompSpinCount},
      {"libgomp linked in: read before parwidth", K::kGompSpinCount, true, false, false, false,
       false, V::kLate, 0},
      {"OMP_WAIT_POLICY or GOMP_SPINCOUNT set", K::kGompSpinCount, true, false, true, true, false,
       V::kKeep, 0},
      {"... replaced with PARWIDTH_OVERRIDE=1", K::kGompSpinCount, true, true, true, true, false,
       V::kReplace, kGompSpinCount},
      {"the user's, and too late anyway", K::kGompSpinCount, true, false, true, false, false,
       V::kKeep, 0},
      {"overridden but too late", K::kGompSpinCount, true, true, true, false, false, V::kLate, 0},
      {"observe mode", K::kGompSpinCount, false, false, false, true, false, V::kObserve, 0},
      {"libomp through its API", K::kKmpBlocktime, true, false, false, true, false, V::kBound,
       kKmpBlocktimeMs},
      {"KMP_BLOCKTIME set", K::kKmpBlocktime, true, false, true, true, false, V::kKeep, 0},
      {"OpenBLAS loaded after parwidth", K::kOpenblasTimeout, true, false, false, true, false,
       V::kBound, kOpenblasTimeoutLog2},
      {"OPENBLAS_THREAD_TIMEOUT set", K::kOpenblasTimeout, true, false, true, true, false, V::kKeep,
       0},
      {"TensorFlow alone on its node", K::kTfSpinning, true, false, false, true, false, V::kAlone,
       0},
      {"TensorFlow where neighbours may come", K::kTfSpinning, true, false, false, true, true,
       V::kBound, 0},
      {"TensorFlow: disable_thread_spinning set", K::kTfSpinning, true, false, true, true, true,
       V::kKeep, 0},
      {"TensorFlow in observe mode", K::kTfSpinning, false, false, false, true, true, V::kObserve,
       0},
  };
  for (const Case& c : kCases) {
    PoolContext ctx;
    ctx.pools = 1;
    ctx.threads = 2;
    ctx.governing = c.governing;
    ctx.override_user = c.override_user;
    WaitFacts f;
    f.knob = c.knob;
    f.user_set = c.user_set;
    f.open = c.open;
    f.node_may_share = c.node_may_share;
    const WaitDecision d = wait_decide(ctx, f);
    EXPECT_EQ(d.verdict, c.verdict) << c.what;
    EXPECT_EQ(d.value, c.value) << c.what;
    EXPECT_EQ(d.changes(), c.verdict == V::kBound || c.verdict == V::kReplace) << c.what;
    EXPECT_STRNE(wait_verdict_text(d.verdict), "") << c.what;
  }
}

TEST(WaitDecide, EveryKnobHasItsDefaultInWords) {
  for (WaitKnob k : {WaitKnob::kGompSpinCount, WaitKnob::kKmpBlocktime, WaitKnob::kOpenblasTimeout,
                     WaitKnob::kTfSpinning})
    EXPECT_STRNE(wait_default_text(k), "");
}

}  // namespace
}  // namespace pw::gov
