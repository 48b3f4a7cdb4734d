// hooks/pools: a PoolContext from the runtime's state.
#include "hooks/pools.h"

#include "runtime/api.h"

namespace pw::hooks {

gov::PoolContext pool_context(const gov::Plan& plan) {
  gov::PoolContext c;
  c.pools = plan.pools;
  c.threads = plan.threads;
  c.omp_cap = rt::omp_cap();
  c.team_cap = rt::team_cap();
  c.governing = rt::governing();
  c.override_user = rt::options().override_user;
  c.pin_off = rt::pin_mode() == gov::PinMode::kNone;
  return c;
}

gov::PoolContext pool_context() {
  return pool_context(rt::plan());
}

}  // namespace pw::hooks
