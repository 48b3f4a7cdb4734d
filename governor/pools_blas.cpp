// governor/pools_blas: capping BLAS pools and following later plans.
#include "governor/pools_blas.h"

namespace pw::gov {

namespace {

PoolContext capped(const PoolContext& c) {
  PoolContext t = c;
  t.threads = blas_cap_threads(c.threads, c.team_cap);
  return t;
}

}  // namespace

int blas_cap_threads(int threads, int team_cap) {
  return team_cap > 0 && team_cap < threads ? team_cap : threads;
}

BlasPoolDecision blas_pool_decide(const PoolContext& c, const BlasPoolFacts& f) {
  BlasPoolDecision d;
  d.before = f.count > 0 ? f.count : f.unset;
  PoolKnob k;
  k.role = PoolRole::kIntraOp;
  k.kind = SettingKind::kCap;
  k.current = d.before;
  k.user_set = f.user_set;
  d.setting = pool_knob_decide(capped(c), k);
  d.follows = d.setting.changes() || d.setting.verdict == SettingVerdict::kBelow;
  return d;
}

int blas_follow_size(int threads, int before) {
  return before > 0 && before < threads ? before : threads;
}

SettingDecision blas_call_decide(const PoolContext& c, int n) {
  PoolKnob k;
  k.role = PoolRole::kIntraOp;
  k.kind = SettingKind::kCap;
  k.current = n;
  k.user_set = true;
  return pool_knob_decide(capped(c), k);
}

}  // namespace pw::gov
