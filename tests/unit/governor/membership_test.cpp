// governor/membership: when a process takes a share of the node and when it gives it back.
#include "governor/membership.h"

#include <gtest/gtest.h>

#include <string>

namespace pw::gov {
namespace {

constexpr uint64_t kS = 1000000000ull;

TEST(Membership, Table) {
  struct Row {
    uint64_t t_s10;  // tenths of a second
    double busy;
    bool parallel, launcher;
    MembershipChange want;
    bool member_after;
    const char* why;
  };
  // One process's life, sample by sample (idle_leave 3 s, busy from 0.5 CPUs).
  const Row rows[] = {
      {1, 0.0, false, false, MembershipChange::kNone, false, "started, nothing ran"},
      {2, 1.0, false, false, MembershipChange::kNone, false, "busy but single-threaded"},
      {3, 0.2, true, false, MembershipChange::kNone, false, "a pool exists, barely runs"},
      {4, 1.8, true, false, MembershipChange::kJoin, true, "its pool runs: joins"},
      {5, 0.1, true, false, MembershipChange::kNone, true, "a short pause keeps the share"},
      {33, 0.0, true, false, MembershipChange::kNone, true, "idle 2.9 s: still a member"},
      {34, 0.0, true, false, MembershipChange::kLeave, false, "idle 3 s: gives it back"},
      {40, 0.0, true, false, MembershipChange::kNone, false, "idle: stays out"},
      {41, 0.9, true, false, MembershipChange::kJoin, true, "wakes: joins again"},
      {42, 1.5, true, true, MembershipChange::kLeave, false, "turned out a launcher: leaves"},
      {43, 1.5, true, true, MembershipChange::kNone, false, "a launcher never counts, busy or not"},
  };
  MembershipState st;
  MembershipConfig c;
  for (const Row& r : rows) {
    MembershipInput in;
    in.t_ns = r.t_s10 * kS / 10;
    in.busy_cpus = r.busy;
    in.parallel = r.parallel;
    in.launcher = r.launcher;
    const MembershipStep s = membership_step(&st, in, c);
    EXPECT_EQ(s.change, r.want) << r.why;
    EXPECT_EQ(st.member, r.member_after) << r.why;
    if (s.change != MembershipChange::kNone) {
      EXPECT_STRNE(s.why, "") << r.why;
    }
  }
}

TEST(Membership, ShorterIdleSetting) {
  MembershipState st;
  MembershipConfig c;
  c.idle_leave_ns = kS / 2;
  EXPECT_EQ(membership_step(&st, {kS, 2.0, true, false}, c).change, MembershipChange::kJoin);
  EXPECT_EQ(membership_step(&st, {kS + kS / 4, 0, true, false}, c).change, MembershipChange::kNone);
  EXPECT_EQ(membership_step(&st, {kS + kS / 2, 0, true, false}, c).change,
            MembershipChange::kLeave);
}

TEST(Membership, FixedPoolsAnnouncedJoinBeforeTheWorkRuns) {
  // A session is being created: no pool thread has run, the process is barely
  // busy, and it joins at once; a launcher still never does.
  MembershipConfig c;
  MembershipState st;
  MembershipInput in;
  in.t_ns = kS;
  in.announced = true;
  const MembershipStep s = membership_step(&st, in, c);
  EXPECT_EQ(s.change, MembershipChange::kJoin);
  EXPECT_STREQ(s.why, "a framework is creating pools it cannot resize later");
  // Idle for the idle time after it: the share goes back as for any member.
  in.announced = false;
  in.t_ns = kS + c.idle_leave_ns;
  EXPECT_EQ(membership_step(&st, in, c).change, MembershipChange::kLeave);

  MembershipState launcher;
  in.announced = true;
  in.launcher = true;
  EXPECT_EQ(membership_step(&launcher, in, c).change, MembershipChange::kNone);
  EXPECT_FALSE(launcher.member);
}

}  // namespace
}  // namespace pw::gov
