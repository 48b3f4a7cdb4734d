// governor/pool_rebuild: shrink at once, grow once the plan has held.
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
  if (shrinks) {
    if (in.since_change_s < c.shrink_gap_s) {
      d.verdict = RebuildVerdict::kHold;
      d.why = "made less than a second ago: rebuilt at a later call";
      return d;
    }
    d.verdict = RebuildVerdict::kRebuild;
    d.why = "its pools are larger than the plan in force (or spin while the node is shared)";
    return d;
  }
  if (in.since_change_s < c.grow_hold_s) {
    d.verdict = RebuildVerdict::kHold;
    d.why = "the plan in force allows more threads: rebuilt once it has held a few seconds";
    return d;
  }
  d.verdict = RebuildVerdict::kRebuild;
  d.why = "the plan in force allows more threads than its pools have";
  return d;
}

}  // namespace pw::gov
