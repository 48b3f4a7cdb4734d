// governor/pools_tf: TensorFlow's two process-wide pools: what parwidth writes
// into a session's (or eager context's) ConfigProto, and how the threads of
// the pools TensorFlow then makes are placed. Pure: hooks/tf.cpp reads the
// program's ConfigProto and environment, asks, writes the fields and notes.
#pragma once

#include <string>

#include "governor/pools.h"

namespace pw::gov {

// The ConfigProto field a decision is about.
enum class TfKnob {
  kInterOp,  // inter_op_parallelism_threads: the plan's pools
  kIntraOp,  // intra_op_parallelism_threads: the plan's threads per pool
};

// Where the user's value came from. The field in the program's ConfigProto
// beats TF_NUM_INTEROP_THREADS / TF_NUM_INTRAOP_THREADS: TensorFlow reads
// those only while the field is 0.
enum class TfUserSource { kNone, kConfig, kEnv };

struct TfKnobFacts {
  TfKnob knob = TfKnob::kIntraOp;
  int config = 0;               // the field in the program's ConfigProto (<= 0: not set)
  int env = 0;                  // the TF_NUM_*_THREADS variable (<= 0: not set or not a count)
  bool graph_known = false;     // the plan came from a model graph
  bool pools_given = false;     // PARWIDTH_POOLS
  bool share_expected = false;  // the plan is for the share this process will have once the
                                // neighbours PARWIDTH_NODE_EXPECT announces are there
};

enum class TfKnobVerdict {
  kKeep,              // the user's value stands
  kUnchanged,         // observe mode or no plan value: the field is not written
  kTfDefault,         // TensorFlow's inter-op default stays (tf_interop_default_kept)
  kPlan,              // the field is written with the plan's value (over the user's under OVERRIDE)
  kTfDefaultOnShare,  // the field is written with TensorFlow's default rule, one thread
                      // per core, on the expected share instead of the whole budget
};

struct TfKnobDecision {
  TfKnobVerdict verdict = TfKnobVerdict::kUnchanged;
  SettingDecision setting;  // the plan's value against the user's (its text for the report)
  TfUserSource user = TfUserSource::kNone;
  int user_value = 0;  // the user's value, from `user`
  int plan = 0;        // the plan's value for the field
  int value = 0;       // the field's value where it is written
  bool writes() const {
    return verdict == TfKnobVerdict::kPlan || verdict == TfKnobVerdict::kTfDefaultOnShare;
  }
};

TfKnobDecision tf_knob_decide(const PoolContext& c, const TfKnobFacts& f);

// TensorFlow's inter-op pool, which a setting decision would size from the
// plan's pools: without a model graph (and no PARWIDTH_POOLS) there is no
// evidence about inter-op parallelism, and a 1-pool plan would serialise a
// tf.function's parallel branches (measured 0.8x in eager mode), so
// TensorFlow's own default stays unless the user set the value. A plan of one
// thread in all (a share of one core's worth or less) is the exception: there
// TensorFlow's default (the machine's cores) can only oversubscribe the
// share. True: keep TensorFlow's default.
bool tf_interop_default_kept(bool user_set, bool graph_known, bool pools_given,
                             int plan_threads_total);

// A pool TensorFlow makes (tsl::thread::ThreadPool), by its name.
enum class TfPool {
  kOther,    // tf.data's and others': not sized by the settings
  kInterOp,  // "Compute" (or "inter_op..."): the inter-op pool
  kIntraOp,  // "numa_-1_Eigen" (or "intra_op..."): the intra-op pool
};
TfPool tf_pool_of(const std::string& name);

// How the threads of a pool TensorFlow starts are placed over the plan.
struct TfPoolStart {
  // kDealt for every pool: TensorFlow starts all its workers from one thread,
  // so inter-op thread k lands in pool k, and its one intra-op pool (shared by
  // every inter-op thread, not one per pool) is spread over all pools' cores.
  WorkerPlacement placement = WorkerPlacement::kDealt;
  bool noted = false;   // a pool the settings size: reported with the size TF used
  bool pinned = false;  // its threads are pinned (governing, PARWIDTH_PIN not none)
};
TfPoolStart tf_pool_start(const PoolContext& c, TfPool pool);

}  // namespace pw::gov
