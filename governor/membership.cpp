// governor/membership: join while busy with parallel work, leave when idle or a launcher.
#include "governor/membership.h"

namespace pw::gov {

MembershipStep membership_step(MembershipState* st, const MembershipInput& in,
                               const MembershipConfig& c) {
  MembershipStep out;
  const bool busy = (in.parallel && in.busy_cpus >= c.busy_cpus) || in.announced;
  if (busy) st->last_busy_ns = in.t_ns;
  if (in.launcher) {
    if (st->member) {
      st->member = false;
      out.change = MembershipChange::kLeave;
      out.why = "it launches ranks that divide the node themselves";
    }
    return out;
  }
  if (!st->member) {
    if (busy) {
      st->member = true;
      out.change = MembershipChange::kJoin;
      out.why = in.announced ? "a framework is creating pools it cannot resize later"
                             : "its parallel work runs";
    }
    return out;
  }
  if (!busy && in.t_ns >= st->last_busy_ns && in.t_ns - st->last_busy_ns >= c.idle_leave_ns) {
    st->member = false;
    out.change = MembershipChange::kLeave;
    out.why = "idle";
  }
  return out;
}

}  // namespace pw::gov
