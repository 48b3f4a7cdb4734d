// governor/pools_torch: torch's intra-op count and inter-op pool.
#include "governor/pools_torch.h"

namespace pw::gov {
namespace {

SettingDecision knob(const PoolContext& c, PoolRole role, int current, bool user_set) {
  PoolKnob k;
  k.role = role;
  k.current = current;
  k.user_set = user_set;
  return pool_knob_decide(c, k);
}

}  // namespace

TorchDecision torch_init_decide(const PoolContext& c, const TorchFacts& f, int torch_default,
                                bool env_set) {
  TorchDecision d;
  if (f.program_threads > 0) {
    // A C++ program set it before torch's first init: noted at its call, and
    // its BLAS pools are the program's business too.
    d.verdict = TorchVerdict::kProgramSet;
    d.setting = knob(c, PoolRole::kIntraOp, f.program_threads, true);
    return d;
  }
  d.setting = knob(c, PoolRole::kIntraOp, torch_default, env_set);
  d.sweep_blas = pool_plan_value(c, PoolRole::kIntraOp) > 0;
  return d;
}

TorchDecision torch_count_decide(const PoolContext& c, const TorchFacts& f, PoolRole role, int n) {
  TorchDecision d;
  d.setting = knob(c, role, n, true);
  if (f.forked_child) {
    d.verdict = TorchVerdict::kChildKeeps;
    d.setting.verdict = SettingVerdict::kKeep;
    d.setting.value = n;
  }
  return d;
}

TorchDecision torch_launch_decide(const PoolContext& c, const TorchFacts& f) {
  TorchDecision d;
  d.setting = knob(c, PoolRole::kInterOp, 0, false);
  if (f.forked_child) {
    // The parent's choice came with its memory (a pool does not).
    d.verdict = TorchVerdict::kChildKeeps;
  } else if (f.program_interop > 0) {
    d.verdict = TorchVerdict::kProgramSet;
  }
  return d;
}

bool torch_omp_count_is_users(const PoolContext& c, const TorchFacts& f) {
  if (f.forked_child) return true;
  return knob(c, PoolRole::kIntraOp, f.program_threads, f.program_threads > 0).verdict ==
         SettingVerdict::kKeep;
}

}  // namespace pw::gov
