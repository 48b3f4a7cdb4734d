// governor/process_share: the whole process inside its share, and where the
// main thread lands on a 2-socket node divided among 4 ranks.
#include "governor/process_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/planning.h"
#include "governor/node_share.h"

namespace pw::gov {
namespace {

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

TEST(ProcessMask, Table) {
  struct Case {
    std::vector<int> affinity, share, want;
    const char* why;
  };
  const Case cases[] = {
      {range(0, 7), range(0, 3), range(0, 3), "launcher rank: half the node"},
      {range(0, 7), {7, 6, 5, 4}, range(4, 7), "order does not matter"},
      {range(0, 7), range(0, 7), {}, "the share is the whole affinity: nothing to do"},
      {range(0, 3), range(0, 7), {}, "a share wider than the affinity never widens"},
      {range(0, 3), range(2, 7), {2, 3}, "only the part inside the affinity"},
      {range(0, 3), range(4, 7), {}, "nothing in common: left alone"},
      {range(0, 3), {}, {}, "no share"},
      {{}, range(0, 3), {}, "no affinity read"},
      {{0, 1}, {1, 1}, {1}, "duplicates"},
  };
  for (const Case& c : cases) EXPECT_EQ(process_mask(c.affinity, c.share), c.want) << c.why;
}

TEST(ThreadFollows, Table) {
  struct Case {
    std::vector<int> thread, from;
    bool want;
    const char* why;
  };
  const Case cases[] = {
      {range(0, 7), range(0, 7), true, "an unpinned thread (the main thread)"},
      {range(0, 7), range(0, 3), true, "wider than the process: created before confinement"},
      {range(0, 3), range(0, 3), true, "inside the old share, unpinned"},
      {{2}, range(0, 3), false, "a pool thread: the plan moves it"},
      {{6, 7}, range(0, 7), false, "pinned by the user: kept"},
      {range(0, 7), {}, false, "no old mask"},
  };
  for (const Case& c : cases) EXPECT_EQ(thread_follows(c.thread, c.from), c.want) << c.why;
}

// 2 sockets x 8 cores (no SMT), 4 processes: every share stays inside one
// socket, and the process's mask (its main thread) is exactly that share.
TEST(ProcessMask, FourRanksOnTwoSocketsMainThreadInsideOneSocket) {
  const std::vector<int> node = range(0, 15);
  std::set<int> seen;
  for (int rank = 0; rank < 4; ++rank) {
    opt::Options o;
    o.topology = "synthetic:package:2 core:8 pu:1";
    o.local_rank = rank;
    o.local_size = 4;
    planning::Planned p;
    std::string err;
    ASSERT_TRUE(planning::plan_process(
        o, [](const char*) -> const char* { return nullptr; }, nullptr, &p, &err))
        << err;
    ASSERT_EQ(p.budget.sockets.size(), 1u) << rank;
    const std::vector<int> mask = process_mask(node, p.budget.cpus);
    ASSERT_EQ(mask, p.budget.cpus) << rank;
    const int socket = rank / 2;
    for (int c : mask) {
      EXPECT_EQ(c / 8, socket) << "rank " << rank << " cpu " << c;
      EXPECT_TRUE(seen.insert(c).second) << "cpu " << c << " in two shares";
    }
  }
  EXPECT_EQ(seen.size(), node.size());
}

// The same node divided by the node registry (processes no launcher describes).
TEST(ProcessMask, FourRegistryMembersOnTwoSocketsMainThreadInsideOneSocket) {
  std::vector<NodeCore> cores;
  for (int c = 0; c < 16; ++c) cores.push_back({c / 8, c});
  std::vector<NodeMember> members;
  for (int i = 0; i < 4; ++i)
    members.push_back({100L + i, 10ULL + static_cast<unsigned>(i), cores});
  std::set<int> seen;
  for (size_t self = 0; self < members.size(); ++self) {
    const NodeShare s = node_share(members, self);
    const std::vector<int> mask = process_mask(range(0, 15), s.cpus);
    ASSERT_EQ(mask.size(), 4u);
    const int socket = mask.front() / 8;
    for (int c : mask) {
      EXPECT_EQ(c / 8, socket) << "member " << self;
      EXPECT_TRUE(seen.insert(c).second);
    }
  }
  EXPECT_EQ(seen.size(), 16u);
}

}  // namespace
}  // namespace pw::gov

namespace pw::gov {
namespace {

TEST(InsideParentRank, Table) {
  struct Case {
    bool same;
    std::vector<int> mine, parent, node;
    bool want;
    const char* why;
  };
  const std::vector<int> node = {0, 1, 2, 3};
  const Case cases[] = {
      {true, {0, 1}, {0, 1}, node, true, "exec'ed by a confined rank: keep its share"},
      {false, {0, 1}, {0, 1}, node, false, "parent is the launcher (no rank variables)"},
      {true, node, node, node, false, "rank started by an unconfined shell: divide"},
      {true, {0, 1}, node, node, false, "parent wider: not its share"},
      {true, {0, 1}, {2, 3}, node, false, "different CPUs"},
      {true, {}, {}, node, false, "no affinity read"},
      {true, {0, 1}, {1, 0}, {3, 2, 1, 0}, true, "order does not matter"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(inside_parent_rank(c.same, c.mine, c.parent, c.node), c.want) << c.why;
}

}  // namespace
}  // namespace pw::gov

namespace pw::gov {
namespace {

TEST(ExecShare, Table) {
  using M = ExecShare::Mask;
  struct Case {
    bool confined, inside, same, rank, governed;
    M mask;
    bool mark;
    const char* why;
  };
  const Case cases[] = {
      {false, false, true, false, true, M::kAsIs, false, "whole affinity: nothing to carry"},
      {false, false, false, true, true, M::kAsIs, false, "an unconfined launcher's ranks"},
      {true, false, false, false, true, M::kShare, true, "a worker exec'ed by a confined rank"},
      {true, false, false, false, false, M::kShare, false, "exec'ed without the preload"},
      {true, false, false, true, true, M::kAffinity, false, "a confined launcher's own ranks"},
      {true, false, true, false, true, M::kAffinity, false, "a rank that execs itself"},
      {true, false, true, false, false, M::kAffinity, false, "execs itself, preload dropped"},
      {false, true, false, false, true, M::kShare, true, "a grandchild: still the rank's work"},
      {false, true, true, false, true, M::kShare, true, "a child that execs itself stays inside"},
      {false, true, true, true, true, M::kAffinity, false, "a rank launched from inside"},
      // posix_spawn asks the same (runtime/child_masks.cpp spawn_cpus: never the
      // same process, "as is" read as the process's affinity).
      {true, false, false, false, false, M::kShare, false, "posix_spawn by a confined process"},
      {true, false, false, true, false, M::kAffinity, false, "posix_spawn of a launcher's rank"},
      {false, false, false, false, false, M::kAsIs, false, "posix_spawn, not confined"},
      {false, true, false, false, false, M::kShare, false, "posix_spawn from inside a share"},
  };
  for (const Case& c : cases) {
    const ExecShare e = exec_share(c.confined, c.inside, c.same, c.rank, c.governed);
    EXPECT_EQ(e.mask, c.mask) << c.why;
    EXPECT_EQ(e.mark, c.mark) << c.why;
  }
}

}  // namespace
}  // namespace pw::gov
