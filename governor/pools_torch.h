// governor/pools_torch: PyTorch's intra-op count and inter-op pool (ATen).
// Pure: hooks/torch.cpp tells torch's own calls from the program's, reads the
// environment and torch's default, asks, applies and notes.
//
// The plan goes in at torch's first init_num_threads (as if the program had
// called torch.set_num_threads right after the import) and, for the inter-op
// pool, at the first at::launch, before the pool starts. A count the program
// sets itself is a setting decision of its own. A forked child (a DataLoader
// worker) keeps what it sets and what it inherited: torch's policy for
// workers, and the child is governed as a process of its own.
#pragma once

#include "governor/pools.h"

namespace pw::gov {

// What the hook knows about torch in this process.
struct TorchFacts {
  bool forked_child = false;  // a forked child of the process where torch was initialised
  int program_threads = 0;    // the last intra-op count the program set (0: none)
  int program_interop = 0;    // the inter-op count the program set (0: none)
};

enum class TorchVerdict {
  kChildKeeps,  // a forked child: its own or inherited count stays (the report says so)
  kProgramSet,  // the program set this count already: decided and noted at its call
  kSetting,     // governor/setting decides (`setting`)
};

struct TorchDecision {
  TorchVerdict verdict = TorchVerdict::kSetting;
  SettingDecision setting;
  bool sweep_blas = false;  // the BLAS pools that came with torch are swept now
  // The count torch gets afterwards where it applies (`setting.value` when it
  // changes; the program's own where it stands).
  bool applies() const { return verdict == TorchVerdict::kSetting && setting.changes(); }
};

// torch's first init_num_threads: its default (hardware_concurrency / 2) gives
// way to the plan's threads per pool, unless OMP_NUM_THREADS / MKL_NUM_THREADS
// set it (env_set) or the program set a count before (a C++ program).
TorchDecision torch_init_decide(const PoolContext& c, const TorchFacts& f, int torch_default,
                                bool env_set);

// The program's own torch.set_num_threads(n) (intra-op) or
// torch.set_num_interop_threads(n) (inter-op), n > 0.
TorchDecision torch_count_decide(const PoolContext& c, const TorchFacts& f, PoolRole role, int n);

// torch's first at::launch, before its inter-op pool starts: the plan's pools,
// unless the program sized it or this is a forked child.
TorchDecision torch_launch_decide(const PoolContext& c, const TorchFacts& f);

// torch passing its intra-op count on to OpenMP (omp_set_num_threads from
// libtorch_cpu): whether that count is the user's (kept by the OpenMP hook,
// as an explicit count) rather than one the team cap may follow. It is the
// user's where the program's count stands, and in a forked child.
bool torch_omp_count_is_users(const PoolContext& c, const TorchFacts& f);

}  // namespace pw::gov
