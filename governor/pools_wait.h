// governor/pools_wait: how a pool's idle threads wait, so that the pools of one
// process that take turns on the same cores, and the pools of neighbours on
// shared cores, do not keep CPUs busy while another pool works. Pure:
// runtime/waits.cpp, hooks/omp.cpp and hooks/tf.cpp gather the facts and apply.
//
// Each runtime lets its idle workers spin before they sleep, for its own
// reasons (a region, a product or an operator that comes right after the last
// one finds them awake): libgomp for 300,000 pause iterations (GOMP_SPINCOUNT;
// OMP_WAIT_POLICY), LLVM's and Intel's OpenMP for 200 ms (KMP_BLOCKTIME), the
// OpenBLAS pthreads build for 2^28 time-stamp ticks, about 0.1 s
// (OPENBLAS_THREAD_TIMEOUT), TensorFlow's Eigen pools briefly (its pool
// constructor's low-latency hint). In a program whose pools take turns (torch's
// OpenMP team, then OpenBLAS's pool, then numpy's), the pool that just finished
// keeps its CPUs busy while the next one works: six threads on two cores, issue
// 37's BERT at 0.81x its defaults. ONNX Runtime's spinning is short and bounded
// by itself; governor/pools_ort decides it.
//
// The rule: every pool's idle workers spin about as long as the gap between two
// of their own back-to-back calls (tens to hundreds of microseconds), then sleep;
// the plan sizes every pool to the share, as the pools take turns on it. A
// setting the user made (the variables, a ConfigProto flag) stands unless
// PARWIDTH_OVERRIDE=1. A runtime that read its variables before parwidth could
// set them (one linked into the program initialises before the preload) keeps
// its own waiting; the report says so.
#pragma once

#include "governor/pools.h"

namespace pw::gov {

enum class WaitKnob {
  kGompSpinCount,    // libgomp: GOMP_SPINCOUNT, read when it loads
  kKmpBlocktime,     // LLVM libomp, Intel libiomp5: kmp_set_blocktime, per master thread
  kOpenblasTimeout,  // OpenBLAS (pthreads): OPENBLAS_THREAD_TIMEOUT, read when it loads
  kTfSpinning,       // TensorFlow's pools: the constructor's low-latency hint
};

// The bounded waits. libgomp's iterations are `pause` instructions (10 to 140
// cycles each on current x86 parts: 0.1-1 ms); OpenBLAS's exponent is of
// time-stamp ticks (2^18: about 0.1 ms at 2.5 GHz); libomp's blocktime is in
// milliseconds, its smallest step.
constexpr long kGompSpinCount = 10000;
constexpr long kOpenblasTimeoutLog2 = 18;
constexpr long kKmpBlocktimeMs = 1;

struct WaitFacts {
  WaitKnob knob = WaitKnob::kGompSpinCount;
  // The user chose this runtime's waiting: GOMP_SPINCOUNT or OMP_WAIT_POLICY;
  // KMP_BLOCKTIME or KMP_LIBRARY; OPENBLAS_THREAD_TIMEOUT; for TensorFlow, the
  // program's ConfigProto disable_thread_spinning.
  bool user_set = false;
  // The runtime will still read the setting (it has not loaded yet; libomp's
  // API and TensorFlow's constructor always do).
  bool open = true;
  // TensorFlow: other governed processes may share this node's cores now or
  // later (the node registry is in use, or a launcher gave a local size > 1).
  bool node_may_share = false;
};

enum class WaitVerdict {
  kBound,    // set to the bounded wait (`value`)
  kReplace,  // the user's setting replaced by the bounded wait (PARWIDTH_OVERRIDE=1)
  kKeep,     // the user's setting stands
  kLate,     // the runtime read its setting before parwidth could set it: its own stands
  kObserve,  // observe mode: reported, not changed
  kAlone,    // TensorFlow alone on its node: its pools keep spinning (they take no
             // turns with another process's pools, and its operators run on both pools)
};

struct WaitDecision {
  WaitVerdict verdict = WaitVerdict::kKeep;
  long value = 0;  // for kBound/kReplace: what the knob is set to (kTfSpinning: 0 = no spinning)
  bool changes() const {
    return verdict == WaitVerdict::kBound || verdict == WaitVerdict::kReplace;
  }
};

WaitDecision wait_decide(const PoolContext& c, const WaitFacts& f);

// The report's words for a decision ("spins up to 10000 iterations, then sleeps (set by
// parwidth)", ...), and for a runtime's own default.
const char* wait_verdict_text(WaitVerdict v);
const char* wait_default_text(WaitKnob k);

}  // namespace pw::gov
