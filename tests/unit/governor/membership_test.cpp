// governor/membership: when a process takes a share of the node and when it gives it back.
#include "governor/membership.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
  // Its pools cannot be resized: it waits four idle times, then gives the share back.
  in.announced = false;
  in.fixed_pools = true;
  in.t_ns = kS + c.idle_leave_ns;
  EXPECT_EQ(membership_step(&st, in, c).change, MembershipChange::kNone);
  in.t_ns = kS + 4 * c.idle_leave_ns - 1;
  EXPECT_EQ(membership_step(&st, in, c).change, MembershipChange::kNone);
  in.t_ns = kS + 4 * c.idle_leave_ns;
  const MembershipStep left = membership_step(&st, in, c);
  EXPECT_EQ(left.change, MembershipChange::kLeave);
  EXPECT_NE(std::string(left.why).find("cannot be resized"), std::string::npos) << left.why;

  MembershipState launcher;
  in.announced = true;
  in.launcher = true;
  EXPECT_EQ(membership_step(&launcher, in, c).change, MembershipChange::kNone);
  EXPECT_FALSE(launcher.member);
}

// A process's life as (busy seconds, then idle seconds) spells, sampled every
// 100 ms; returns the changes with the time (in tenths of a second) of each.
struct Spell {
  double busy_s, idle_s;
};
struct Change {
  MembershipChange change;
  uint64_t t_s10;
  std::string why;
};
std::vector<Change> live(const std::vector<Spell>& spells, const MembershipConfig& c,
                         bool fixed_pools = false, MembershipState* out = nullptr,
                         bool serves = false) {
  MembershipState st;
  std::vector<Change> changes;
  uint64_t t = 0;  // tenths of a second
  for (const Spell& sp : spells) {
    const uint64_t busy_end = t + static_cast<uint64_t>(sp.busy_s * 10 + 0.5);
    const uint64_t idle_end = busy_end + static_cast<uint64_t>(sp.idle_s * 10 + 0.5);
    for (; t < idle_end; ++t) {
      MembershipInput in;
      in.t_ns = (t + 1) * kS / 10;
      in.busy_cpus = t < busy_end ? 1.0 : 0.0;
      in.parallel = true;
      in.fixed_pools = fixed_pools;
      in.serves = serves;
      const MembershipStep s = membership_step(&st, in, c);
      if (s.change != MembershipChange::kNone) changes.push_back({s.change, t + 1, s.why});
    }
  }
  if (out) *out = st;
  return changes;
}

TEST(Membership, BurstyProcessKeepsItsShareAcrossGapsWithinItsHysteresis) {
  const MembershipConfig c;  // idle time 3 s
  struct Row {
    std::vector<Spell> spells;
    int joins, leaves;
    const char* why;
  };
  const Row rows[] = {
      {{{2, 1.5}, {2, 1.5}, {2, 1.5}, {2, 0}}, 1, 0, "gaps shorter than the idle time"},
      // The first gap longer than the idle time costs one leave and join; the
      // process came back after 6 s, so it keeps its share for 12 s from then on.
      {{{2, 6}, {2, 6}, {2, 6}, {2, 6}, {2, 0}}, 2, 1, "6 s gaps: one leave, then kept"},
      {{{2, 1.5}, {2, 6}, {2, 1.5}, {2, 6}, {2, 10}, {2, 0}}, 2, 1, "mixed gaps: learned"},
      // A process that really stops (idle far longer than its gaps) gives its
      // share back once it has been idle for twice its longest gap.
      {{{2, 6}, {2, 6}, {2, 60}}, 2, 2, "stops after its bursts: leaves"},
      {{{30, 60}}, 1, 1, "a batch job that stops: leaves after the idle time"},
  };
  // A server: its first 6 s gap is within the four idle times it waits from the start.
  EXPECT_EQ(live({{2, 1.5}, {2, 6}, {2, 1.5}, {2, 6}, {2, 0}}, c, false, nullptr, true).size(), 1u);
  for (const Row& r : rows) {
    const std::vector<Change> ch = live(r.spells, c);
    int joins = 0, leaves = 0;
    for (const Change& x : ch) (x.change == MembershipChange::kJoin ? joins : leaves)++;
    EXPECT_EQ(joins, r.joins) << r.why;
    EXPECT_EQ(leaves, r.leaves) << r.why;
  }
}

TEST(Membership, WhenAStoppedProcessLeaves) {
  const MembershipConfig c;
  // Bursts with 6 s gaps (6.1 s between busy samples), then a stop: it leaves
  // twice that after its last busy sample.
  std::vector<Change> ch = live({{2, 6}, {2, 6}, {2, 60}}, c);
  ASSERT_EQ(ch.size(), 4u);
  const uint64_t last_busy = 20 + 60 + 20 + 60 + 20;  // tenths: the third burst's last sample
  EXPECT_EQ(ch[3].change, MembershipChange::kLeave);
  EXPECT_EQ(ch[3].t_s10, last_busy + 2 * 61);
  EXPECT_NE(ch[3].why.find("gap"), std::string::npos) << ch[3].why;
  // A batch job: 3 s after its last busy sample, the idle time.
  ch = live({{30, 60}}, c);
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[1].t_s10, 300u + 30);
  EXPECT_EQ(ch[1].why, "idle");
  // Holding pools it cannot resize: four idle times.
  ch = live({{30, 60}}, c, true);
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[1].t_s10, 300u + 120);
}

TEST(Membership, WhatTheHoldLearns) {
  const MembershipConfig c;
  MembershipState st;
  MembershipInput plain, fixed, server;
  fixed.fixed_pools = true;
  server.serves = true;
  const uint64_t tenth = kS / 10;  // a gap is counted between busy samples: the idle time + 0.1 s
  // The traffic's own pauses (0.3 s between requests) do not push a 6 s gap out of the history.
  live({{2, 6}, {0.5, 0.3}, {0.5, 0.3}, {0.5, 0.3}, {0.5, 0.3}, {0.5, 0.3}, {1, 0}}, c, false, &st);
  EXPECT_EQ(membership_hold_ns(st, plain, c), 2 * 61 * tenth);
  // Only the last few gaps count: four shorter ones replace it.
  live({{2, 6}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {1, 0}}, c, false, &st);
  EXPECT_EQ(membership_hold_ns(st, plain, c), 2 * 21 * tenth);
  // A stop and a new start much later says nothing about bursts.
  live({{2, 40}, {2, 0}}, c, false, &st);
  EXPECT_EQ(membership_hold_ns(st, plain, c), c.idle_leave_ns);
  // At most ten idle times: a 14 s gap is learned, a 15 s one is a stop.
  live({{2, 14}, {2, 0}}, c, false, &st);
  EXPECT_EQ(membership_hold_ns(st, plain, c), 2 * 141 * tenth);
  live({{2, 15}, {2, 0}}, c, false, &st);
  EXPECT_EQ(membership_hold_ns(st, plain, c), c.idle_leave_ns);
  // Learned holds and pools that cannot be resized: the longer one.
  live({{2, 1.5}, {2, 0}}, c, false, &st);
  EXPECT_EQ(membership_hold_ns(st, plain, c), 2 * 16 * tenth);
  EXPECT_EQ(membership_hold_ns(st, fixed, c), 4 * c.idle_leave_ns);
  // A server (its event loop waits for requests) waits as long from the start.
  const char* why = "";
  EXPECT_EQ(membership_hold_ns(MembershipState(), server, c, &why), 4 * c.idle_leave_ns);
  EXPECT_NE(std::string(why).find("server"), std::string::npos) << why;
}

TEST(Membership, ExitingNeverJoins) {
  const MembershipConfig c;
  MembershipState st;
  MembershipInput in;
  in.parallel = true;
  in.busy_cpus = 1.5;
  in.t_ns = kS;
  ASSERT_EQ(membership_step(&st, in, c).change, MembershipChange::kJoin);
  in.busy_cpus = 0;
  in.t_ns = 5 * kS;
  ASSERT_EQ(membership_step(&st, in, c).change, MembershipChange::kLeave);
  // Gave its share back, then exits: its teardown keeps a CPU busy, and a
  // framework may even announce pools; it does not join again.
  in.exiting = true;
  in.busy_cpus = 1.5;
  in.announced = true;
  for (uint64_t t = 6; t < 10; ++t) {
    in.t_ns = t * kS;
    EXPECT_EQ(membership_step(&st, in, c).change, MembershipChange::kNone);
    EXPECT_FALSE(st.member);
  }
  // A member that starts exiting keeps its share (its exit leaves the registry), and
  // gives it back when idle as any member does.
  MembershipState busy;
  MembershipInput b;
  b.parallel = true;
  b.busy_cpus = 1.5;
  b.t_ns = kS;
  ASSERT_EQ(membership_step(&busy, b, c).change, MembershipChange::kJoin);
  b.exiting = true;
  b.t_ns = 2 * kS;
  EXPECT_EQ(membership_step(&busy, b, c).change, MembershipChange::kNone);
  EXPECT_TRUE(busy.member);
  b.busy_cpus = 0;
  b.t_ns = 2 * kS + c.idle_leave_ns;
  EXPECT_EQ(membership_step(&busy, b, c).change, MembershipChange::kLeave);
}

}  // namespace
}  // namespace pw::gov
