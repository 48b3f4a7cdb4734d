// governor/pools: the vocabulary of every decision about a governed process's
// thread pools: OpenMP teams, BLAS pools, torch's intra- and inter-op pools,
// TensorFlow's, ONNX Runtime sessions', the example engine's.
//
// A pool decision reads one PoolContext (the plan in force and the process's
// mode and options: the same for every pool of the process) and the facts of
// one pool, and answers with governor/setting's apply / keep / replace
// decision, or with a runtime's own verdict built on it (pools_omp.h,
// pools_tf.h, pools_torch.h, pools_blas.h, pools_ort.h). The hooks gather the
// facts, ask, and apply; they hold no keep / override / size logic of their
// own. Pure: values in, values out.
#pragma once

#include "governor/setting.h"

namespace pw::gov {

// What a knob sizes, and so which of the plan's numbers it gets.
enum class PoolRole {
  kIntraOp,  // threads that run one operator together (a framework's intra-op
             // pool, a BLAS pool): the plan's threads per pool
  kInterOp,  // operators run side by side (a framework's inter-op pool): the plan's pools
  kOmpTeam,  // an OpenMP team: the team cap in force (the plan's threads per
             // pool, lowered by the monitor; none while the user's OMP_NUM_THREADS stands)
};

// The facts every pool decision of a process reads.
struct PoolContext {
  int pools = 0;    // the plan's pools (0: no plan)
  int threads = 0;  // the plan's threads per pool
  int omp_cap = 0;  // the OpenMP team cap in force (0: none)
  // Cores shared by time with other servers (governor/node_share): the most
  // threads a pool whose threads wait for each other (a BLAS pool; OpenMP
  // teams through omp_cap) gets; 0: the plan's threads per pool.
  int team_cap = 0;
  bool governing = true;       // false: observe mode, nothing changes
  bool override_user = false;  // PARWIDTH_OVERRIDE=1
  bool pin_off = false;        // PARWIDTH_PIN=none
};

// One knob of one pool, as the runtime has it now.
struct PoolKnob {
  PoolRole role = PoolRole::kIntraOp;
  SettingKind kind = SettingKind::kSet;
  int current = 0;        // the runtime's value now; <= 0: unknown or its default
  bool user_set = false;  // the program or its user chose `current`
};

// The plan's value for a knob of this role (<= 0: the plan says nothing).
int pool_plan_value(const PoolContext& c, PoolRole role);

// governor/setting's decision for the knob, on the plan's value for its role.
SettingDecision pool_knob_decide(const PoolContext& c, const PoolKnob& k);

// The same decision for an option whose plan value is not one of the plan's
// numbers (ONNX Runtime's execution mode, its spinning): `plan` > 0 when the
// plan asks for it.
SettingDecision pool_option_decide(const PoolContext& c, int plan, int current, bool user_set);

// How the workers that a runtime starts for one of its pools are placed.
enum class WorkerPlacement {
  kCreatorsPool,  // in the pool of the thread that starts them (an OpenMP team's workers)
  kDealt,         // pool after pool, as if a non-member created each (a
                  // framework's pool made in one go: one inter-op thread per
                  // pool, an intra-op pool spread over every pool's cores)
};

}  // namespace pw::gov
