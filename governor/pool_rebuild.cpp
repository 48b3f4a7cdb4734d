// governor/pool_rebuild: due at once when shrinking, once the plan has held when
// growing; in a server, made when the session's traffic pauses, or at a call of a
// loop that never does; elsewhere at the next call.
#include "governor/pool_rebuild.h"

namespace pw::gov {
namespace {

// Threads a setting stands for: ORT's default (-1, 0) is unknown here, and
// counts as more than any explicit size.
bool smaller(int want, int now) {
  if (want <= 0) return false;
  return now <= 0 || want < now;
}

}  // namespace

const char* rebuild_verdict_name(RebuildVerdict v) {
  switch (v) {
    case RebuildVerdict::kSame:
      return "same";
    case RebuildVerdict::kRebuild:
      return "rebuild";
    case RebuildVerdict::kHold:
      return "hold";
    case RebuildVerdict::kKept:
      return "kept";
    case RebuildVerdict::kDefer:
      return "defer";
  }
  return "same";
}

RebuildDecision pool_rebuild_decide(const RebuildInput& in, const RebuildConfig& c) {
  RebuildDecision d;
  if (in.want == in.now) {
    d.why = "the session's pools are the plan's";
    return d;
  }
  if (in.pinned_by_program) {
    d.verdict = RebuildVerdict::kKept;
    d.why = "the program holds IO bindings of the session: its pools keep their size";
    return d;
  }
  const bool shrinks = smaller(in.want.intra, in.now.intra) ||
                       smaller(in.want.inter, in.now.inter) ||
                       (in.want.spin == 0 && in.now.spin != 0);
  // How long the rebuild has been due (negative: not yet).
  double due_s = 0;
  if (shrinks) {
    due_s = in.rebuilds > 0 ? in.since_change_s - c.shrink_gap_s : in.since_change_s;
    if (in.since_plan_s < due_s) due_s = in.since_plan_s;
    if (due_s < 0) {
      d.verdict = RebuildVerdict::kHold;
      d.why = "rebuilt less than a second ago: made again later";
      return d;
    }
  } else {
    due_s = in.since_plan_s - c.grow_hold_s;
    if (due_s < 0) {
      d.verdict = RebuildVerdict::kHold;
      d.why = "the plan in force allows more threads: rebuilt once it has held a few seconds";
      return d;
    }
  }
  if (!in.at_call) {
    if (in.runs_in_flight == 0 && in.paused_s >= c.quiet_s) {
      d.verdict = RebuildVerdict::kRebuild;
      d.why = shrinks ? "between runs, its traffic paused: its pools were larger than the plan in "
                        "force (or spun while the node is shared)"
                      : "between runs, its traffic paused: the plan in force allows more threads "
                        "than its pools had";
      return d;
    }
    d.verdict = RebuildVerdict::kDefer;
    d.why = "runs in flight: made again at the next pause";
    return d;
  }
  // At a call: outside a server nobody waits for it; a server's loop that
  // never pauses gets it once due for a while.
  if (in.runs_in_flight == 0 &&
      (!in.serves || (in.paused_s < c.quiet_s && due_s >= c.busy_deadline_s))) {
    static const char* const kAtCall[2][2] = {
        // [serves][shrinks]
        {"at its next call once due (the process serves no requests that would wait): the plan "
         "in force allows more threads than its pools had",
         "at its next call once due (the process serves no requests that would wait): its pools "
         "were larger than the plan in force (or spun while the node is shared)"},
        {"its runs never paused since the plan changed (a loop): rebuilt at a call; the plan in "
         "force allows more threads than its pools had",
         "its runs never paused since the plan changed (a loop): rebuilt at a call; its pools "
         "were larger than the plan in force (or spun while the node is shared)"},
    };
    d.verdict = RebuildVerdict::kRebuild;
    d.why = kAtCall[in.serves ? 1 : 0][shrinks ? 1 : 0];
    return d;
  }
  d.verdict = RebuildVerdict::kDefer;
  d.why = "due, but not on a request's path: made again when its traffic pauses";
  return d;
}

}  // namespace pw::gov
