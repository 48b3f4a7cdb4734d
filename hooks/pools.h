// hooks/pools: the facts every pool decision reads (governor/pools.h), gathered
// from the runtime: the plan, the OpenMP cap, the mode and the options.
#pragma once

#include "governor/plan.h"
#include "governor/pools.h"

namespace pw::hooks {

// With the plan in force: a copy of one snapshot (runtime/in_force.h; a short
// lock and an allocation), so the OpenMP hooks ask once per plan generation,
// not at every region.
gov::PoolContext pool_context();

// With `plan` instead: the plan for pools a framework makes once (rt::fixed_pools_plan).
gov::PoolContext pool_context(const gov::Plan& plan);

}  // namespace pw::hooks
