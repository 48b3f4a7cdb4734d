// governor/node_share: disjoint, balanced, socket-aware shares from the node registry's members.
#include "governor/node_share.h"

#include <gtest/gtest.h>

#include <set>

namespace pw::gov {
namespace {

std::vector<NodeCore> cores(int sockets, int per_socket, int first = 0) {
  std::vector<NodeCore> v;
  for (int s = 0; s < sockets; ++s)
    for (int c = 0; c < per_socket; ++c) v.push_back({s, first + s * per_socket + c});
  return v;
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

std::vector<NodeMember> same(int n, const std::vector<NodeCore>& c) {
  std::vector<NodeMember> m;
  for (int i = 0; i < n; ++i) m.push_back({1000L + i, 100ULL + static_cast<unsigned>(i), c});
  return m;
}

TEST(NodeShareExpected, AloneOfTwoExpectedTakesTheFirstHalf) {
  auto m = same(1, cores(2, 4));
  NodeShare s = node_share_expected(m, 0, 2);
  EXPECT_EQ(s.cpus, range(0, 3));
  EXPECT_EQ(s.cores_worth, 4);
  EXPECT_NE(s.note.find("1 of 2 expected"), std::string::npos) << s.note;
}

TEST(NodeShareExpected, TheExpectedShareIsTheOneTheArrivalsLeave) {
  // Whoever is present, in whatever order they arrive: the share planned
  // ahead is the one node_share gives once every expected member is there.
  for (int expected = 2; expected <= 5; ++expected) {
    auto all = same(expected, cores(1, 6));
    for (int present = 1; present <= expected; ++present) {
      std::vector<NodeMember> now(all.begin(), all.begin() + present);
      for (int i = 0; i < present; ++i)
        EXPECT_EQ(node_share_expected(now, static_cast<size_t>(i), expected).cpus,
                  node_share(all, static_cast<size_t>(i)).cpus)
            << "member " << i << " of " << present << " present, " << expected << " expected";
    }
  }
}

TEST(NodeShareExpected, MoreExpectedThanCoresShareTheRegion) {
  auto m = same(1, cores(1, 2));
  NodeShare s = node_share_expected(m, 0, 3);
  EXPECT_EQ(s.cpus, range(0, 1));
  EXPECT_TRUE(s.overlap);
  EXPECT_EQ(s.cores_worth, 1);
}

TEST(NodeShareExpected, AsManyPresentAsExpectedIsTheNodesShare) {
  auto m = same(3, cores(1, 6));
  for (int expected : {0, 1, 2, 3}) {
    EXPECT_EQ(node_share_expected(m, 1, expected).cpus, node_share(m, 1).cpus);
    EXPECT_EQ(node_share_expected(m, 1, expected).note, node_share(m, 1).note);
  }
  EXPECT_TRUE(node_share_expected(m, 5, 4).cpus.empty());  // not a member of the list
}

TEST(NodeShare, AloneKeepsEverything) {
  auto m = same(1, cores(2, 4));
  NodeShare s = node_share(m, 0);
  EXPECT_EQ(s.cpus, range(0, 7));
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(s.size, 1);
  EXPECT_FALSE(s.overlap);
}

TEST(NodeShare, TwoOnTwoSocketsTakeOneSocketEach) {
  auto m = same(2, cores(2, 24));
  EXPECT_EQ(node_share(m, 0).cpus, range(0, 23));
  EXPECT_EQ(node_share(m, 1).cpus, range(24, 47));
  EXPECT_EQ(node_share(m, 1).rank, 1);
  EXPECT_EQ(node_share(m, 1).size, 2);
}

TEST(NodeShare, ArrivalOrderNotListOrderDecides) {
  auto m = same(2, cores(1, 2));
  std::swap(m[0], m[1]);  // the later arrival is listed first
  EXPECT_EQ(node_share(m, 0).cpus, std::vector<int>{1});
  EXPECT_EQ(node_share(m, 1).cpus, std::vector<int>{0});
  // Equal start times: the pid breaks the tie.
  m[0].start = m[1].start;
  EXPECT_EQ(node_share(m, 0).cpus, std::vector<int>{1});  // pid 1001 > 1000
}

TEST(NodeShare, SharesAreDisjointAndCoverTheNode) {
  for (int n = 1; n <= 9; ++n) {
    auto m = same(n, cores(2, 6));
    std::set<int> seen;
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      NodeShare s = node_share(m, static_cast<size_t>(i));
      EXPECT_FALSE(s.overlap);
      EXPECT_GE(s.cpus.size(), 12u / static_cast<size_t>(n)) << n;
      EXPECT_LE(s.cpus.size(), 12u / static_cast<size_t>(n) + 1) << n;
      total += s.cpus.size();
      seen.insert(s.cpus.begin(), s.cpus.end());
    }
    EXPECT_EQ(total, 12u) << n;
    EXPECT_EQ(seen.size(), 12u) << n;
  }
}

TEST(NodeShare, UnevenSplitAvoidsSpanningSockets) {
  // 2 sockets x 3 cores, 4 members: 2,1,2,1 keeps every share inside a socket
  // (a plain 2,2,1,1 split would put the second member across the boundary).
  auto m = same(4, cores(2, 3));
  EXPECT_EQ(node_share(m, 0).cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(node_share(m, 1).cpus, (std::vector<int>{2}));
  EXPECT_EQ(node_share(m, 2).cpus, (std::vector<int>{3, 4}));
  EXPECT_EQ(node_share(m, 3).cpus, (std::vector<int>{5}));
}

TEST(NodeShare, MoreMembersThanCoresShareTheWholeRegion) {
  // Three members on two cores: pinned one core each, one member would have a
  // core and two would split one (0.75 x each of the other two against an
  // even two thirds); sharing both, the kernel balances them.
  auto m = same(3, cores(1, 2));
  for (size_t i = 0; i < 3; ++i) {
    NodeShare s = node_share(m, i);
    EXPECT_EQ(s.cpus, (std::vector<int>{0, 1})) << i;
    EXPECT_TRUE(s.overlap);
    EXPECT_EQ(s.cores_worth, 1) << "two thirds of a core: one thread";
    EXPECT_EQ(s.size, 3);
  }
  // Five on four: four fifths each, one thread; seven on four: one thread.
  EXPECT_EQ(node_share(same(5, cores(1, 4)), 4).cores_worth, 1);
  EXPECT_EQ(node_share(same(7, cores(1, 4)), 0).cpus, range(0, 3));
}

TEST(NodeShare, CoresWorthIsTheShareWithoutOverlap) {
  EXPECT_EQ(node_share(same(2, cores(1, 4)), 0).cores_worth, 2);
  EXPECT_EQ(node_share(same(3, cores(1, 4)), 0).cores_worth, 2);
  EXPECT_EQ(node_share(same(3, cores(1, 4)), 2).cores_worth, 1);
  EXPECT_FALSE(node_share(same(3, cores(1, 4)), 2).overlap);
}

// Servers only: every one of them as wide as the cores they share, by time.
TEST(NodeShare, ServersShareTheirCoresByTime) {
  auto m = same(2, cores(2, 2));
  for (NodeMember& x : m) x.serves = true;
  for (size_t i = 0; i < 2; ++i) {
    NodeShare s = node_share(m, i);
    EXPECT_EQ(s.cpus, range(0, 3)) << i;
    EXPECT_EQ(s.cores_worth, 4) << i;
    EXPECT_TRUE(s.time_shared);
    EXPECT_FALSE(s.overlap);
    EXPECT_EQ(s.size, 2);
    EXPECT_EQ(s.rank, static_cast<int>(i));
    EXPECT_EQ(s.team_worth, 2) << i;  // what a split would give: half of four cores
    EXPECT_NE(s.note.find("2 servers: shared by time"), std::string::npos) << s.note;
  }
  // More servers than cores: the same, each the whole worth (not n / k).
  auto many = same(3, cores(1, 2));
  for (NodeMember& x : many) x.serves = true;
  EXPECT_EQ(node_share(many, 2).cpus, range(0, 1));
  EXPECT_EQ(node_share(many, 2).cores_worth, 2);
  EXPECT_EQ(node_share(many, 2).team_worth, 1);
  // One server leaving changes nothing for the other: the same cores, the same worth.
  NodeShare alone = node_share({m[1]}, 0);
  EXPECT_EQ(alone.cpus, node_share(m, 1).cpus);
  EXPECT_EQ(alone.cores_worth, node_share(m, 1).cores_worth);
  EXPECT_FALSE(alone.time_shared);
  EXPECT_EQ(alone.team_worth, 0);
}

// A batch job beside a server: split as any two members, both ways.
TEST(NodeShare, AServerBesideABatchJobIsSplit) {
  auto m = same(2, cores(1, 4));
  m[0].serves = true;
  for (size_t i = 0; i < 2; ++i) {
    NodeShare s = node_share(m, i);
    EXPECT_FALSE(s.time_shared) << i;
    EXPECT_EQ(s.team_worth, 0) << i;
    EXPECT_EQ(s.cores_worth, 2) << i;
  }
  EXPECT_EQ(node_share(m, 0).cpus, range(0, 1));
  EXPECT_EQ(node_share(m, 1).cpus, range(2, 3));
  // Three members, two of them servers: still a split of three.
  auto three = same(3, cores(1, 6));
  three[0].serves = three[2].serves = true;
  EXPECT_EQ(node_share(three, 2).cpus, range(4, 5));
  EXPECT_FALSE(node_share(three, 2).time_shared);
}

// Servers on cores of their own (disjoint budgets) keep them; where two
// servers' budgets overlap with a batch job's only in part, the region the
// servers alone share is shared by time and the rest is split.
TEST(NodeShare, OnlyTheRegionsOfServersAloneAreTimeShared) {
  std::vector<NodeMember> m = {{1, 1, cores(1, 6)}, {2, 2, cores(1, 6)}, {3, 3, cores(1, 4, 2)}};
  m[0].serves = m[1].serves = true;
  // Cores 0-1: the two servers alone, shared by time; cores 2-5: all three, split 2/1/1.
  NodeShare s = node_share(m, 0);
  EXPECT_TRUE(s.time_shared);
  EXPECT_EQ(s.cpus, range(0, 3));
  EXPECT_EQ(s.cores_worth, 4);
  EXPECT_EQ(s.team_worth, 3);  // one of the servers' two cores, two of the rest's four
  EXPECT_EQ(node_share(m, 1).cpus, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(node_share(m, 2).cpus, (std::vector<int>{5}));
  EXPECT_FALSE(node_share(m, 2).time_shared);
}

TEST(NodeShare, DisjointBudgetsAreLeftAlone) {
  // Two jobs in different cpusets (Slurm, taskset): nothing to divide.
  std::vector<NodeMember> m{{10, 1, cores(1, 4, 0)}, {11, 2, cores(1, 4, 4)}};
  NodeShare s = node_share(m, 1);
  EXPECT_EQ(s.cpus, range(4, 7));
  EXPECT_EQ(s.size, 1);
  EXPECT_EQ(node_share(m, 0).cpus, range(0, 3));
}

TEST(NodeShare, PartialOverlapDividesOnlyTheSharedCores) {
  // A may use 0-3, B 0-7: the shared 0-3 are split, 4-7 stay B's.
  std::vector<NodeMember> m{{10, 1, cores(1, 4)}, {11, 2, cores(1, 8)}};
  NodeShare a = node_share(m, 0), b = node_share(m, 1);
  EXPECT_EQ(a.cpus, range(0, 1));
  EXPECT_EQ(b.cpus, (std::vector<int>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(a.size, 2);
  EXPECT_EQ(b.size, 2);
}

TEST(NodeShare, SocketOrderComesFromSocketsNotCpuNumbers) {
  // Interleaved numbering: socket 0 has even CPUs, socket 1 odd ones.
  std::vector<NodeCore> c;
  for (int i = 0; i < 8; ++i) c.push_back({i % 2, i});
  auto m = same(2, c);
  EXPECT_EQ(node_share(m, 0).cpus, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(node_share(m, 1).cpus, (std::vector<int>{1, 3, 5, 7}));
}

TEST(NodeShare, GrowsBackWhenAMemberLeaves) {
  auto m = same(3, cores(1, 6));
  EXPECT_EQ(node_share(m, 2).cpus, range(4, 5));
  m.erase(m.begin());  // the first arrival exits
  EXPECT_EQ(node_share(m, 1).cpus, range(3, 5));
  m.erase(m.begin());
  EXPECT_EQ(node_share(m, 0).cpus, range(0, 5));
}

TEST(NodeShare, OutOfRangeSelfIsEmpty) {
  auto m = same(1, cores(1, 2));
  EXPECT_TRUE(node_share(m, 5).cpus.empty());
}

}  // namespace
}  // namespace pw::gov
