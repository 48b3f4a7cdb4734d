// governor/membership: join while busy with parallel work (never while exiting),
// leave when idle for longer than the process's own gaps, or a launcher.
#include "governor/membership.h"

namespace pw::gov {
namespace {

uint64_t scaled(uint64_t ns, double factor) {
  return factor > 0 ? static_cast<uint64_t>(static_cast<double>(ns) * factor) : 0;
}

}  // namespace

uint64_t membership_hold_ns(const MembershipState& st, const MembershipInput& in,
                            const MembershipConfig& c, const char** why) {
  const char* reason = "idle";
  uint64_t hold = c.idle_leave_ns;
  if ((in.fixed_pools || in.serves) && c.fixed_pools_factor > 1) {
    hold = scaled(c.idle_leave_ns, c.fixed_pools_factor);
    reason = in.fixed_pools ? "idle for longer than a process whose pools cannot be resized waits"
                            : "idle for longer than a server waits for its requests";
  }
  uint64_t longest = 0;
  const size_t n = st.gaps < kMembershipGaps ? st.gaps : kMembershipGaps;
  for (size_t i = 0; i < n; ++i)
    if (st.gaps_ns[i] > longest) longest = st.gaps_ns[i];
  const uint64_t learned = scaled(longest, c.gap_margin);
  if (learned > hold) {
    hold = learned;
    reason = "idle for longer than the longest recent gap it came back from, with a margin";
  }
  const uint64_t most = scaled(c.idle_leave_ns, c.max_hold_factor);
  if (most >= c.idle_leave_ns && hold > most) hold = most;
  if (why) *why = reason;
  return hold;
}

MembershipStep membership_step(MembershipState* st, const MembershipInput& in,
                               const MembershipConfig& c) {
  MembershipStep out;
  const bool busy = !in.exiting && ((in.parallel && in.busy_cpus >= c.busy_cpus) || in.announced);
  if (busy) {
    // A gap it came back from: what its next gaps will likely be. One longer
    // than the longest hold was a stop and a new start, which says nothing
    // about bursts.
    const uint64_t gap =
        st->busy_seen && in.t_ns > st->last_busy_ns ? in.t_ns - st->last_busy_ns : 0;
    const uint64_t most = scaled(c.idle_leave_ns, c.max_hold_factor);
    if (gap > 0 && gap >= scaled(c.idle_leave_ns, c.min_gap_fraction) && c.gap_margin > 0 &&
        static_cast<double>(gap) * c.gap_margin <= static_cast<double>(most)) {
      st->gaps_ns[st->gaps % kMembershipGaps] = gap;
      ++st->gaps;
    }
    st->last_busy_ns = in.t_ns;
    st->busy_seen = true;
  }
  const char* idle_why = "idle";
  out.hold_ns = membership_hold_ns(*st, in, c, &idle_why);
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
  if (!busy && in.t_ns >= st->last_busy_ns && in.t_ns - st->last_busy_ns >= out.hold_ns) {
    st->member = false;
    out.change = MembershipChange::kLeave;
    out.why = idle_why;
  }
  return out;
}

}  // namespace pw::gov
