// governor/pools: the plan's value for a pool's knob, and the knob's decision.
#include "governor/pools.h"

namespace pw::gov {

int pool_plan_value(const PoolContext& c, PoolRole role) {
  switch (role) {
    case PoolRole::kIntraOp:
      return c.threads;
    case PoolRole::kInterOp:
      return c.pools;
    case PoolRole::kOmpTeam:
      return c.omp_cap;
  }
  return 0;
}

namespace {

SettingDecision decide(const PoolContext& c, SettingKind kind, int plan, int current,
                       bool user_set) {
  SettingInput in;
  in.kind = kind;
  in.plan = plan;
  in.current = current;
  in.user_set = user_set;
  in.governing = c.governing;
  in.override_user = c.override_user;
  return setting_decide(in);
}

}  // namespace

SettingDecision pool_knob_decide(const PoolContext& c, const PoolKnob& k) {
  return decide(c, k.kind, pool_plan_value(c, k.role), k.current, k.user_set);
}

SettingDecision pool_option_decide(const PoolContext& c, int plan, int current, bool user_set) {
  return decide(c, SettingKind::kSet, plan, current, user_set);
}

}  // namespace pw::gov
