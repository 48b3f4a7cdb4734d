// governor/pool_rebuild: whether a framework session whose thread pools were
// sized for an earlier plan is made again for the plan in force, and when.
//
// A framework that sizes its pools once (an ONNX Runtime session) can follow
// the node's division only by being rebuilt, where the framework allows it
// (ORT's Python session, the way its own set_providers rebuilds it). A pool
// larger than the share (re-pinned into it, its threads take turns on its
// cores) or spinning while the node is shared is due at once the first time
// (a division that overtook the session while it was being made: two
// processes started together, the first sized alone), then once the session
// was last rebuilt a second ago; a pool that could grow costs only this
// process some speed, and is due once the session has seen the plan for a
// while (since its first look at that plan, not since the plan came into
// force), so that a neighbour that pauses and comes back does not make every
// session rebuild twice.
//
// In a process that serves requests (an event loop waits for them), a due
// rebuild is made between runs, not on a request's path: when the session's
// traffic pauses (no run in flight for a moment), on a thread of its own while
// later runs use the session as it was; a server's session whose runs never
// pause is rebuilt at a call once it has been due for a while. A program that
// serves nobody (a loop calling the session back to back, a batch job) has no
// request to delay: its session is rebuilt at its next call once due, as a
// pool of the wrong size spinning on a neighbour's core costs it every run
// until then (two ORT processes started together: 40 ms a run against 28).
// Pure: values in, a verdict out.
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
  double since_plan_s = 0;         // since the session first saw the plan in force
  bool pinned_by_program = false;  // the program holds objects bound to the session (IO bindings)
  // Asked at the start of a run (that run waits for a rebuild made now), or
  // from the session's own watcher while no run is in flight.
  bool at_call = true;
  int runs_in_flight = 0;  // runs of the session in flight now, the asking one not counted
  // The longest time with no run in flight since the plan changed; from the
  // watcher, the pause it is in now.
  double paused_s = 0;
  // The process serves requests (an event loop of it was seen waiting for them
  // while it holds a listening socket).
  bool serves = false;
  int rebuilds = 0;  // times the session was made again for a plan (0: as the program made it)
};

struct RebuildConfig {
  double shrink_gap_s = 1.0;  // after a first rebuild, at most one a second, shrinking
  double grow_hold_s = 5.0;   // a larger pool only once the session has seen the plan this long
  // A pause this long with no run in flight is between two of the session's
  // bursts of traffic (or requests): a due rebuild is made then.
  double quiet_s = 0.2;
  // A server's session due this long while its runs never paused as long:
  // rebuilt at a call.
  double busy_deadline_s = 2.0;
};

enum class RebuildVerdict {
  kSame,     // the session already has the plan's pools
  kRebuild,  // make it again with `want`
  kHold,     // not due yet (asked again later)
  kKept,     // the program holds objects bound to it: not rebuilt (the report says so)
  kDefer,    // due, but runs are in flight or came without a pause: made at the next pause
};

struct RebuildDecision {
  RebuildVerdict verdict = RebuildVerdict::kSame;
  const char* why = "";  // a static phrase for the report
};

RebuildDecision pool_rebuild_decide(const RebuildInput& in, const RebuildConfig& c = {});

const char* rebuild_verdict_name(RebuildVerdict v);  // "same", "rebuild", "hold", ...

}  // namespace pw::gov
