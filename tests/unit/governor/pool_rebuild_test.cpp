// governor/pool_rebuild: when a session is made again for the plan in force.
#include "governor/pool_rebuild.h"

#include <gtest/gtest.h>

#include <string>

namespace pw::gov {
namespace {

// How a session is asked: at the start of a run, or by its watcher between runs.
enum Where { kCall, kWatch };

// One asking of a session: its pools, the plan's, the times (since it was
// made, since it saw the plan, the pause), where it is asked from and the
// other runs in flight.
RebuildInput asked(SessionPools now, SessionPools want, double since, double plan, Where where,
                   int inflight, double paused) {
  RebuildInput in;
  in.now = now;
  in.want = want;
  in.since_change_s = since;
  in.since_plan_s = plan;
  in.at_call = where == kCall;
  in.runs_in_flight = inflight;
  in.paused_s = paused;
  return in;
}

// The table is a server's (an event loop waits for its requests): rebuilds
// keep off the requests' path. PoolRebuild.OutsideAServer has the rest.
TEST(PoolRebuild, Table) {
  struct Row {
    SessionPools now, want;
    double since, plan;  // since the session was made, since it saw the plan
    Where where;
    int inflight;   // other runs in flight
    double paused;  // the longest pause since the plan changed (the watcher: the one now)
    bool bound;
    RebuildVerdict verdict;
    const char* why;
  };
  const SessionPools two{2, -1, -1, -1}, one_quiet{1, -1, -1, 0}, two_quiet{2, -1, -1, 0};
  const SessionPools ort_default{-1, -1, -1, -1};
  const Row rows[] = {
      {two, two, 0.0, 0.0, kCall, 0, 0, false, RebuildVerdict::kSame, "already the plan's"},
      {two, one_quiet, 0.2, 0.2, kCall, 0, 0, false, RebuildVerdict::kHold,
       "shrinking, made 0.2 s ago"},
      // Due: made between runs, never on a request's path.
      {two, one_quiet, 30, 0.1, kCall, 0, 0, false, RebuildVerdict::kDefer,
       "due at a call: not on the request's path"},
      {two, one_quiet, 30, 0.1, kWatch, 0, 0.3, false, RebuildVerdict::kRebuild,
       "its traffic paused: made now"},
      {two, one_quiet, 30, 0.1, kWatch, 0, 0.1, false, RebuildVerdict::kDefer,
       "a pause shorter than a request's gap: not yet"},
      {two, one_quiet, 30, 0.1, kWatch, 1, 0, false, RebuildVerdict::kDefer,
       "a run in flight: not now"},
      {two, one_quiet, 1.0, 1.0, kWatch, 0, 0.3, false, RebuildVerdict::kRebuild,
       "made a second ago, paused: shrinks"},
      // A server's session called back to back (no pause): rebuilt at a call once due a while.
      {two, one_quiet, 30, 1.9, kCall, 0, 0.001, false, RebuildVerdict::kDefer,
       "a loop, due 1.9 s: not yet"},
      {two, one_quiet, 30, 2.0, kCall, 0, 0.001, false, RebuildVerdict::kRebuild,
       "a loop, due 2 s: at the call"},
      {two, one_quiet, 30, 5.0, kCall, 0, 0.5, false, RebuildVerdict::kDefer,
       "its traffic has paused since: left to the watcher"},
      {two, one_quiet, 30, 5.0, kCall, 1, 0.001, false, RebuildVerdict::kDefer,
       "runs of other threads in flight: never at a call"},
      {two, two_quiet, 30, 30, kWatch, 0, 1, false, RebuildVerdict::kRebuild,
       "spinning on a shared node"},
      {ort_default, one_quiet, 30, 30, kWatch, 0, 1, false, RebuildVerdict::kRebuild,
       "ORT's default size shrinks to any explicit one"},
      // Growing: the plan must hold first, so that a neighbour's pause costs no rebuild.
      {one_quiet, two, 30, 1.0, kWatch, 0, 1, false, RebuildVerdict::kHold,
       "growing: the plan must hold"},
      {one_quiet, two, 30, 5.0, kWatch, 0, 1, false, RebuildVerdict::kRebuild,
       "growing after 5 s, paused"},
      {one_quiet, two, 3.0, 5.0, kWatch, 0, 1, false, RebuildVerdict::kRebuild,
       "growing: counted from the plan, not the session"},
      {one_quiet, two, 30, 6.0, kCall, 0, 0.001, false, RebuildVerdict::kDefer,
       "growing in a loop, due 1 s"},
      {one_quiet, two, 30, 7.0, kCall, 0, 0.001, false, RebuildVerdict::kRebuild,
       "growing in a loop, due 2 s"},
      {one_quiet,
       {1, -1, -1, -1},
       30,
       5.0,
       kWatch,
       0,
       1,
       false,
       RebuildVerdict::kRebuild,
       "alone again: spinning back on"},
      {{1, 1, 0, 0},
       {1, 2, 1, 0},
       30,
       5.0,
       kWatch,
       0,
       1,
       false,
       RebuildVerdict::kRebuild,
       "more pools: parallel mode"},
      {{1, 2, 1, 0},
       {1, 1, 0, 0},
       1.0,
       1.0,
       kWatch,
       0,
       1,
       false,
       RebuildVerdict::kRebuild,
       "fewer pools: shrinks"},
      {two, one_quiet, 30, 30, kWatch, 0, 1, true, RebuildVerdict::kKept,
       "IO bindings: never rebuilt"},
      {two, two, 30, 30, kCall, 0, 0, true, RebuildVerdict::kSame, "bound but already right"},
  };
  for (const Row& r : rows) {
    RebuildInput in = asked(r.now, r.want, r.since, r.plan, r.where, r.inflight, r.paused);
    in.pinned_by_program = r.bound;
    in.serves = true;
    in.rebuilds = 1;  // the gap between two rebuilds (a first one: PoolRebuild.FirstShrink)
    const RebuildDecision d = pool_rebuild_decide(in);
    EXPECT_EQ(d.verdict, r.verdict) << r.why;
    EXPECT_STRNE(d.why, "") << r.why;
    EXPECT_STRNE(rebuild_verdict_name(d.verdict), "") << r.why;
  }
}

TEST(PoolRebuild, OutsideAServer) {
  // A program that serves no requests: a due session is made again at its
  // next call, not after a deadline; the holds and the in-flight rule stand.
  struct Row {
    SessionPools now, want;
    double since, plan, paused;
    Where where;
    int inflight;
    int rebuilds;
    RebuildVerdict verdict;
    const char* why;
  };
  const SessionPools two{2, -1, -1, -1}, one_quiet{1, -1, -1, 0};
  const Row rows[] = {
      {two, one_quiet, 1.2, 0.1, 0.001, kCall, 0, 1, RebuildVerdict::kRebuild,
       "a loop, shrinking, due: at the next call"},
      {two, one_quiet, 0.5, 0.1, 0.001, kCall, 0, 1, RebuildVerdict::kHold,
       "rebuilt half a second ago: not yet"},
      {two, one_quiet, 0.1, 0.05, 0.001, kCall, 0, 0, RebuildVerdict::kRebuild,
       "made 0.1 s ago as the program made it, overtaken by a division: at once"},
      {two, one_quiet, 30, 0.1, 0.001, kCall, 1, 1, RebuildVerdict::kDefer,
       "another thread's run in flight: not now"},
      {two, one_quiet, 30, 0.1, 0.3, kWatch, 0, 1, RebuildVerdict::kRebuild,
       "paused: the watcher makes it"},
      {two, one_quiet, 30, 0.1, 0.0, kWatch, 1, 1, RebuildVerdict::kDefer,
       "the watcher with a run in flight: not now"},
      {one_quiet, two, 30, 1.0, 0.001, kCall, 0, 0, RebuildVerdict::kHold,
       "growing: the plan must hold first"},
      {one_quiet, two, 0.2, 5.0, 0.001, kCall, 0, 3, RebuildVerdict::kRebuild,
       "growing, the plan held: at the next call"},
  };
  for (const Row& r : rows) {
    RebuildInput in = asked(r.now, r.want, r.since, r.plan, r.where, r.inflight, r.paused);
    in.rebuilds = r.rebuilds;
    in.serves = false;
    const RebuildDecision d = pool_rebuild_decide(in);
    EXPECT_EQ(d.verdict, r.verdict) << r.why;
    EXPECT_STRNE(d.why, "") << r.why;
    // The same facts in a server: never sooner.
    in.serves = true;
    const RebuildVerdict server = pool_rebuild_decide(in).verdict;
    if (r.verdict != RebuildVerdict::kRebuild) {
      EXPECT_NE(server, RebuildVerdict::kRebuild) << r.why;
    }
  }
}

TEST(PoolRebuild, FirstShrink) {
  // A session the program made, overtaken by a division (two processes
  // started together: the first sized its session alone): due at once,
  // made between runs in a server; after a rebuild, not again for a second.
  RebuildInput in;
  in.now = {2, -1, -1, -1};
  in.want = {1, -1, -1, 0};
  in.since_change_s = 0.1;
  in.since_plan_s = 0.05;
  in.serves = true;
  in.at_call = false;
  in.paused_s = 0.3;
  EXPECT_EQ(pool_rebuild_decide(in).verdict, RebuildVerdict::kRebuild);
  in.at_call = true;
  in.paused_s = 0.001;
  EXPECT_EQ(pool_rebuild_decide(in).verdict, RebuildVerdict::kDefer);
  in.rebuilds = 1;
  in.at_call = false;
  in.paused_s = 0.3;
  EXPECT_EQ(pool_rebuild_decide(in).verdict, RebuildVerdict::kHold);
  in.since_change_s = 1.0;
  EXPECT_EQ(pool_rebuild_decide(in).verdict, RebuildVerdict::kRebuild);
}

TEST(PoolRebuild, NoRebuildWithRunsInFlight) {
  // Whatever the times, a rebuild is never decided while another run of the session is in flight.
  for (int where = 0; where < 4; ++where)
    for (double plan : {0.0, 1.0, 3.0, 10.0, 100.0})
      for (double paused : {0.0, 0.05, 0.3, 5.0}) {
        RebuildInput in;
        in.now = {2, -1, -1, -1};
        in.want = plan > 5 ? SessionPools{4, -1, -1, 0} : SessionPools{1, -1, -1, 0};
        in.since_change_s = 100;
        in.since_plan_s = plan;
        in.at_call = where % 2 == 0;
        in.serves = where >= 2;
        in.paused_s = paused;
        in.runs_in_flight = 1;
        EXPECT_NE(pool_rebuild_decide(in).verdict, RebuildVerdict::kRebuild)
            << where << " " << plan << " " << paused;
      }
}

TEST(PoolRebuild, HoldTimesAreTheConfigs) {
  RebuildInput in;
  in.now = {1, -1, -1, 0};
  in.want = {4, -1, -1, 0};
  in.at_call = false;
  in.paused_s = 1;
  RebuildConfig c;
  c.grow_hold_s = 20;
  in.since_change_s = 100;
  in.since_plan_s = 19;
  EXPECT_EQ(pool_rebuild_decide(in, c).verdict, RebuildVerdict::kHold);
  in.since_plan_s = 20;
  EXPECT_EQ(pool_rebuild_decide(in, c).verdict, RebuildVerdict::kRebuild);
  c.quiet_s = 2;
  EXPECT_EQ(pool_rebuild_decide(in, c).verdict, RebuildVerdict::kDefer);
}

}  // namespace
}  // namespace pw::gov
