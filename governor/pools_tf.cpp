// governor/pools_tf: TensorFlow's ConfigProto fields and the placement of its pools' threads.
#include "governor/pools_tf.h"

namespace pw::gov {

TfKnobDecision tf_knob_decide(const PoolContext& c, const TfKnobFacts& f) {
  TfKnobDecision d;
  if (f.config > 0) {
    d.user = TfUserSource::kConfig;
    d.user_value = f.config;
  } else if (f.env > 0) {
    d.user = TfUserSource::kEnv;
    d.user_value = f.env;
  }
  const bool user_set = d.user != TfUserSource::kNone;
  PoolKnob k;
  k.role = f.knob == TfKnob::kInterOp ? PoolRole::kInterOp : PoolRole::kIntraOp;
  k.current = d.user_value;
  k.user_set = user_set;
  d.plan = pool_plan_value(c, k.role);
  d.setting = pool_knob_decide(c, k);
  if (d.setting.verdict == SettingVerdict::kKeep) {
    d.verdict = TfKnobVerdict::kKeep;
    return d;
  }
  if (!d.setting.changes()) {
    d.verdict = TfKnobVerdict::kUnchanged;
    return d;
  }
  d.verdict = TfKnobVerdict::kPlan;
  d.value = d.setting.value;
  if (f.knob == TfKnob::kInterOp &&
      tf_interop_default_kept(user_set, f.graph_known, f.pools_given, c.pools * c.threads)) {
    if (!f.share_expected) {
      d.verdict = TfKnobVerdict::kTfDefault;
      d.value = 0;
    } else {
      // TensorFlow's default is one thread per CPU it may use now: the whole
      // budget, not the expected share. The default's rule, on the share.
      d.verdict = TfKnobVerdict::kTfDefaultOnShare;
      d.value = c.pools * c.threads;
    }
  }
  return d;
}

bool tf_interop_default_kept(bool user_set, bool graph_known, bool pools_given,
                             int plan_threads_total) {
  return !user_set && !graph_known && !pools_given && plan_threads_total > 1;
}

TfPool tf_pool_of(const std::string& name) {
  if (name == "Compute" || name.rfind("inter_op", 0) == 0) return TfPool::kInterOp;
  if (name.find("_Eigen") != std::string::npos || name.rfind("intra_op", 0) == 0)
    return TfPool::kIntraOp;
  return TfPool::kOther;
}

TfPoolStart tf_pool_start(const PoolContext& c, TfPool pool) {
  TfPoolStart s;
  s.placement = WorkerPlacement::kDealt;
  s.noted = pool != TfPool::kOther;
  s.pinned = c.governing && !c.pin_off;
  return s;
}

}  // namespace pw::gov
