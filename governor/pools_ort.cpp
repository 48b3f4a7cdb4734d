// governor/pools_ort: an ONNX Runtime session's thread options from the plan.
#include "governor/pools_ort.h"

namespace pw::gov {
namespace {

// A thread count of the session's options, `current` as the program set it (0: ORT's default).
OrtOptionDecision count_decide(const PoolContext& c, PoolRole role, int current) {
  PoolKnob k;
  k.role = role;
  k.current = current;
  k.user_set = current > 0;
  return {true, k.user_set, pool_knob_decide(c, k)};
}

}  // namespace

OrtSessionDecision ort_session_decide(const PoolContext& c, const OrtUserOptions& u,
                                      bool node_shared) {
  OrtSessionDecision d;
  d.intra = count_decide(c, PoolRole::kIntraOp, u.intra);
  if (d.intra.setting.changes()) d.set.intra = d.intra.setting.value;
  if (c.pools > 1) {
    d.mode = {true, u.parallel, pool_option_decide(c, 1, u.parallel ? 1 : 0, u.parallel)};
    // Inter-op threads only work in the parallel mode: the program's or ours.
    const bool parallel =
        d.mode.setting.changes() || (d.mode.setting.verdict == SettingVerdict::kKeep && u.parallel);
    if (d.mode.setting.changes()) d.set.parallel = 1;
    if (parallel) {
      d.inter = count_decide(c, PoolRole::kInterOp, u.inter);
      if (d.inter.setting.changes()) d.set.inter = d.inter.setting.value;
    }
  }
  if (node_shared) {
    d.spin = {true, u.spin >= 0, pool_option_decide(c, 1, u.spin, u.spin >= 0)};
    if (d.spin.setting.changes()) d.set.spin = 0;
  }
  return d;
}

SessionPools ort_session_pools(const OrtUserOptions& u, const OrtPlanned& planned) {
  SessionPools s;
  s.intra = planned.intra >= 0 ? planned.intra : (u.intra > 0 ? u.intra : -1);
  s.inter = planned.inter >= 0 ? planned.inter : (u.inter > 0 ? u.inter : -1);
  s.parallel = planned.parallel >= 0 ? planned.parallel : (u.parallel ? 1 : -1);
  s.spin = planned.spin >= 0 ? planned.spin : u.spin;
  return s;
}

}  // namespace pw::gov
