// governor/pools_ort: an ONNX Runtime session's thread options. Pure:
// hooks/ort.cpp (Python and the C API) reads the program's options, asks,
// sets them on the session's options and notes each decision.
//
// intra_op_num_threads = the plan's threads per pool; with more than one pool,
// the parallel execution mode with the plan's pools as inter-op threads
// (inter-op threads only work in ORT_PARALLEL); spinning off while other
// governed processes share the node (an idle worker that spins takes a core
// from a neighbour). What the program set is kept unless PARWIDTH_OVERRIDE=1.
#pragma once

#include "governor/pool_rebuild.h"
#include "governor/pools.h"

namespace pw::gov {

// The program's own SessionOptions, as far as they matter to the plan.
struct OrtUserOptions {
  int intra = 0;          // intra_op_num_threads (0: ORT's default)
  int inter = 0;          // inter_op_num_threads
  bool parallel = false;  // execution_mode == ORT_PARALLEL
  int spin = -1;          // session.intra_op.allow_spinning: -1 unset, 0, 1
};

// What parwidth sets on top of them; -1 = leave as the program had it.
struct OrtPlanned {
  int intra = -1;
  int inter = -1;
  int parallel = -1;
  int spin = -1;  // for both session.intra_op and session.inter_op allow_spinning
};

// One option's decision; `asked` false: the plan has nothing to say about it
// (one pool: no mode, no inter-op; a node of its own: no spinning).
struct OrtOptionDecision {
  bool asked = false;
  bool user_set = false;  // the program set the option
  SettingDecision setting;
};

struct OrtSessionDecision {
  OrtPlanned set;  // what to set on the session's options
  OrtOptionDecision intra, mode, inter, spin;
};

// node_shared: other governed processes share this process's node.
OrtSessionDecision ort_session_decide(const PoolContext& c, const OrtUserOptions& u,
                                      bool node_shared);

// The pools a session made with the program's `u` and parwidth's `planned` on
// top has, as ORT takes them (governor/pool_rebuild compares two of them).
SessionPools ort_session_pools(const OrtUserOptions& u, const OrtPlanned& planned);

}  // namespace pw::gov
