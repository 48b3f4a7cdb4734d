// Plans for widths 1..6 on three machines, against hand-computed core sets.
#include <gtest/gtest.h>

#include <numeric>

#include "governor/plan.h"
#include "tests/unit/governor/budgets.h"

namespace pw::gov {
namespace {

using test::machine;

GraphWidth width(long w, long max_level) {
  GraphWidth v;
  v.known = true;
  v.avg_width = w;
  v.max_level_width = max_level;
  return v;
}

// cpus first, first+step, ... (count of them)
std::vector<int> seq(int first, int count, int step = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * step);
  return v;
}

std::vector<int> sizes_of(const Plan& p) {
  std::vector<int> s;
  for (const auto& set : p.core_sets) s.push_back(static_cast<int>(set.size()));
  return s;
}

TEST(Plan, OneSocketTwoCores) {
  const BudgetView b = machine(1, 2, 1);
  Plan p = plan_for(b, width(1, 4), {});
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{{0, 1}}));
  for (int w = 2; w <= 6; ++w) {
    p = plan_for(b, width(w, 6), {});
    EXPECT_EQ(p.pools, 2) << "width " << w << " is clamped to 2 cores";
    EXPECT_EQ(p.threads, 1);
    EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{{0}, {1}}));
    EXPECT_EQ(p.spanning_pools, 0);
  }
}

TEST(Plan, TwoSocketsOf24CoresWithSmtOff) {
  const BudgetView b = machine(2, 24, 2);  // primary PUs are the even ones
  Plan p = plan_for(b, width(1, 8), {});
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 48);
  EXPECT_EQ(p.core_sets[0], seq(0, 48, 2));
  EXPECT_EQ(p.spanning_pools, 1);

  p = plan_for(b, width(2, 8), {});
  EXPECT_EQ(p.threads, 24);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{seq(0, 24, 2), seq(48, 24, 2)}));
  EXPECT_EQ(p.spanning_pools, 0);

  p = plan_for(b, width(3, 8), {});
  EXPECT_EQ(p.threads, 16);
  EXPECT_EQ(p.core_sets,
            (std::vector<std::vector<int>>{seq(0, 16, 2), seq(32, 16, 2), seq(64, 16, 2)}));
  EXPECT_EQ(p.spanning_pools, 1) << "three pools of 16 on 2x24 cannot all fit a socket";

  p = plan_for(b, width(4, 8), {});
  EXPECT_EQ(p.threads, 12);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{seq(0, 12, 2), seq(24, 12, 2),
                                                        seq(48, 12, 2), seq(72, 12, 2)}));
  EXPECT_EQ(p.spanning_pools, 0);

  // 48 = 10+10+10+9+9: no prefix reaches 24, so one pool spans; big ones first.
  p = plan_for(b, width(5, 8), {});
  EXPECT_EQ(p.threads, 9);
  EXPECT_EQ(sizes_of(p), (std::vector<int>{10, 10, 10, 9, 9}));
  EXPECT_EQ(p.core_sets[2], seq(40, 10, 2));
  EXPECT_EQ(p.core_sets[4], seq(78, 9, 2));
  EXPECT_EQ(p.spanning_pools, 1);

  p = plan_for(b, width(6, 8), {});
  EXPECT_EQ(p.threads, 8);
  EXPECT_EQ(sizes_of(p), (std::vector<int>(6, 8)));
  EXPECT_EQ(p.core_sets[3], seq(48, 8, 2));
  EXPECT_EQ(p.spanning_pools, 0);
}

TEST(Plan, TwoSocketsOf24CoresWithSmtOn) {
  PlanOptions o;
  o.smt = true;
  Plan p = plan_for(machine(2, 24, 2), width(2, 8), o);
  EXPECT_EQ(p.slots, 96);
  EXPECT_EQ(p.threads, 48);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{seq(0, 48), seq(48, 48)}));
}

TEST(Plan, FourSocketsOf8Cores) {
  const BudgetView b = machine(4, 8, 1);
  Plan p = plan_for(b, width(1, 8), {});
  EXPECT_EQ(p.core_sets[0], seq(0, 32));
  EXPECT_EQ(p.spanning_pools, 1);

  p = plan_for(b, width(2, 8), {});
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{seq(0, 16), seq(16, 16)}));
  EXPECT_EQ(p.spanning_pools, 2);

  p = plan_for(b, width(3, 8), {});
  EXPECT_EQ(p.threads, 10);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{seq(0, 11), seq(11, 11), seq(22, 10)}));
  EXPECT_EQ(p.spanning_pools, 3);

  p = plan_for(b, width(4, 8), {});
  EXPECT_EQ(p.core_sets,
            (std::vector<std::vector<int>>{seq(0, 8), seq(8, 8), seq(16, 8), seq(24, 8)}));
  EXPECT_EQ(p.spanning_pools, 0);

  // Sizes 7,7,6,6,6: no prefix can reach 8, 16 or 24; each boundary is inside one pool.
  p = plan_for(b, width(5, 8), {});
  EXPECT_EQ(p.threads, 6);
  EXPECT_EQ(sizes_of(p), (std::vector<int>{7, 7, 6, 6, 6}));
  EXPECT_EQ(p.spanning_pools, 3);

  // Sizes 6,5,5,6,5,5: 6+5+5 = 16 lands on a boundary, leaving only 8 and 24 inside pools.
  p = plan_for(b, width(6, 8), {});
  EXPECT_EQ(p.threads, 5);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{seq(0, 6), seq(6, 5), seq(11, 5),
                                                        seq(16, 6), seq(22, 5), seq(27, 5)}));
  EXPECT_EQ(p.spanning_pools, 2);
}

TEST(Plan, PoolsNeverExceedMaxLevelWidth) {
  Plan p = plan_for(machine(1, 8, 1), width(5, 2), {});
  EXPECT_EQ(p.pools, 2);
  EXPECT_EQ(p.threads, 4);
}

TEST(Plan, NoGraphMeansOnePool) {
  Plan p = plan_for(machine(2, 4, 1), GraphWidth{}, {});
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 8);
}

TEST(Plan, OverridesWinAndAreClamped) {
  PlanOptions o;
  o.pools = 3;
  o.threads = 5;
  Plan p = plan_for(machine(1, 6, 1), width(1, 1), o);
  EXPECT_EQ(p.pools, 3);
  EXPECT_EQ(p.threads, 5);
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}}));
  o.pools = 100;
  o.threads = 0;
  p = plan_for(machine(1, 2, 1), width(1, 1), o);
  EXPECT_EQ(p.pools, 2) << "at least one slot per pool";
  EXPECT_EQ(p.threads, 1);
}

TEST(Plan, EmptyBudgetStillGivesAPlan) {
  Plan p = plan_for(BudgetView{}, width(3, 3), {});
  EXPECT_EQ(p.pools, 1);
  EXPECT_EQ(p.threads, 1);
}

TEST(Plan, UnevenSocketsAfterACpusetKeepPoolsBalanced) {
  // Socket 0 kept 5 cores, socket 1 only 1: balance wins over locality.
  BudgetView b = machine(1, 5, 1);
  CoreSlot other;
  other.socket = 1;
  other.pus = {8};
  b.cores.push_back(other);
  Plan p = plan_for(b, width(2, 2), {});
  EXPECT_EQ(p.core_sets, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 8}}));
  EXPECT_EQ(p.spanning_pools, 1);
}

}  // namespace
}  // namespace pw::gov
