// governor/pool_rebuild: whether a framework session whose thread pools were
// sized for an earlier plan is made again for the plan in force.
//
// A framework that sizes its pools once (an ONNX Runtime session) can follow
// the node's division only by being rebuilt between two of the program's
// calls, where the framework allows it (ORT's Python session, the way its
// own set_providers rebuilds it). A pool larger than the share, or spinning
// while the node is shared, costs the neighbours at once: such a session is
// rebuilt at the first call after the change. A pool that could grow costs
// only this process some speed: it is rebuilt once the plan has held for a
// while, so that a neighbour that pauses and comes back does not make every
// session rebuild twice. Pure: values in, a verdict out.
#pragma once

namespace pw::gov {

// A session's pool options as ORT takes them; -1 = not set (ORT's default).
struct SessionPools {
  int intra = -1;     // intra_op_num_threads
  int inter = -1;     // inter_op_num_threads
  int parallel = -1;  // execution_mode ORT_PARALLEL (1) or sequential (0)
  int spin = -1;      // allow_spinning (intra and inter op)
  bool operator==(const SessionPools& o) const {
    return intra == o.intra && inter == o.inter && parallel == o.parallel && spin == o.spin;
  }
};

struct RebuildInput {
  SessionPools now;                // what the session was created with
  SessionPools want;               // what the plan in force gives it
  double since_change_s = 0;       // since the session was last made (created or rebuilt)
  bool pinned_by_program = false;  // the program holds objects bound to the session (IO bindings)
};

struct RebuildConfig {
  double shrink_gap_s = 1.0;  // at most one rebuild a second, shrinking
  double grow_hold_s = 5.0;   // a larger pool only after the plan held this long
};

enum class RebuildVerdict {
  kSame,     // the session already has the plan's pools
  kRebuild,  // make it again with `want`
  kHold,     // not yet (asked again at a later call)
  kKept,     // the program holds objects bound to it: not rebuilt (the report says so)
};

struct RebuildDecision {
  RebuildVerdict verdict = RebuildVerdict::kSame;
  const char* why = "";  // a static phrase for the report
};

RebuildDecision pool_rebuild_decide(const RebuildInput& in, const RebuildConfig& c = {});

}  // namespace pw::gov
