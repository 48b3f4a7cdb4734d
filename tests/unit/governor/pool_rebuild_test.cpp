// governor/pool_rebuild: when a session is made again for the plan in force.
#include "governor/pool_rebuild.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

TEST(PoolRebuild, Table) {
  struct Row {
    SessionPools now, want;
    double since;
    bool bound;
    RebuildVerdict verdict;
    const char* why;
  };
  const SessionPools two{2, -1, -1, -1}, one_quiet{1, -1, -1, 0}, two_quiet{2, -1, -1, 0};
  const Row rows[] = {
      {two, two, 0.0, false, RebuildVerdict::kSame, "already the plan's"},
      {two, one_quiet, 0.2, false, RebuildVerdict::kHold, "shrinking, made 0.2 s ago"},
      {two, one_quiet, 1.0, false, RebuildVerdict::kRebuild, "shrinking: at once after 1 s"},
      {two, two_quiet, 30, false, RebuildVerdict::kRebuild, "spinning on a shared node"},
      {{-1, -1, -1, -1},
       one_quiet,
       30,
       false,
       RebuildVerdict::kRebuild,
       "ORT's default size shrinks to any explicit one"},
      {one_quiet, two, 1.0, false, RebuildVerdict::kHold, "growing: the plan must hold"},
      {one_quiet, two, 5.0, false, RebuildVerdict::kRebuild, "growing after 5 s"},
      {one_quiet,
       {1, -1, -1, -1},
       5.0,
       false,
       RebuildVerdict::kRebuild,
       "alone again: spinning back on"},
      {{1, 1, 0, 0},
       {1, 2, 1, 0},
       5.0,
       false,
       RebuildVerdict::kRebuild,
       "more pools: parallel mode"},
      {{1, 2, 1, 0}, {1, 1, 0, 0}, 1.0, false, RebuildVerdict::kRebuild, "fewer pools: shrinks"},
      {two, one_quiet, 30, true, RebuildVerdict::kKept, "IO bindings: never rebuilt"},
      {two, two, 30, true, RebuildVerdict::kSame, "bound but already right"},
  };
  for (const Row& r : rows) {
    RebuildInput in;
    in.now = r.now;
    in.want = r.want;
    in.since_change_s = r.since;
    in.pinned_by_program = r.bound;
    const RebuildDecision d = pool_rebuild_decide(in);
    EXPECT_EQ(d.verdict, r.verdict) << r.why;
    EXPECT_STRNE(d.why, "") << r.why;
  }
}

TEST(PoolRebuild, HoldTimesAreTheConfigs) {
  RebuildInput in;
  in.now = {1, -1, -1, 0};
  in.want = {4, -1, -1, 0};
  RebuildConfig c;
  c.grow_hold_s = 20;
  in.since_change_s = 19;
  EXPECT_EQ(pool_rebuild_decide(in, c).verdict, RebuildVerdict::kHold);
  in.since_change_s = 20;
  EXPECT_EQ(pool_rebuild_decide(in, c).verdict, RebuildVerdict::kRebuild);
}

}  // namespace
}  // namespace pw::gov
