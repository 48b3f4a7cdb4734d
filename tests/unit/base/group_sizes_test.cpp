// base/group_sizes against hand-worked arrangements.
#include "base/group_sizes.h"

#include <gtest/gtest.h>

namespace pw {
namespace {

TEST(GroupSizes, OneSocketIsBalancedWithTheLargerFirst) {
  const std::vector<int> one(7, 0);
  EXPECT_EQ(group_sizes(one, 3), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(group_sizes(one, 7), (std::vector<int>(7, 1)));
  EXPECT_EQ(group_sizes(one, 1), (std::vector<int>{7}));
}

TEST(GroupSizes, TheLargerGroupsGoWhereNoneSpansASocket) {
  // 2 sockets x 3 cores in 4 groups: 2,1 | 2,1 spans nothing; 2,2,1,1 would.
  const std::vector<int> two = {0, 0, 0, 1, 1, 1};
  const std::vector<int> sizes = group_sizes(two, 4);
  EXPECT_EQ(sizes, (std::vector<int>{2, 1, 2, 1}));
  int at = 0, spanning = 0;
  for (int s : sizes) {
    spanning += group_spans(two, at, at + s);
    at += s;
  }
  EXPECT_EQ(spanning, 0);
  // 2 groups of 3 over 3 + 3: one per socket.
  EXPECT_EQ(group_sizes(two, 2), (std::vector<int>{3, 3}));
}

TEST(GroupSizes, TheLargerGroupGoesSecondWhenFirstItWouldSpan) {
  // Sockets of 2 and 3 cores (an uneven budget) in 2 groups: 3,2 would span a
  // boundary, so the larger group goes second.
  const std::vector<int> uneven = {0, 0, 1, 1, 1};
  const std::vector<int> sizes = group_sizes(uneven, 2);
  EXPECT_EQ(sizes, (std::vector<int>{2, 3}));  // 2 | 3 spans nothing
  EXPECT_FALSE(group_spans(uneven, 0, 2));
  EXPECT_FALSE(group_spans(uneven, 2, 5));
  EXPECT_TRUE(group_spans(uneven, 1, 3));
  // 3 sockets of 1 core in 2 groups: one must span; 2,1 (the larger first).
  EXPECT_EQ(group_sizes({0, 1, 2}, 2), (std::vector<int>{2, 1}));
}

TEST(GroupSizes, GroupsAreClampedToTheSlots) {
  EXPECT_EQ(group_sizes({0, 1}, 5), (std::vector<int>{1, 1}));
  EXPECT_EQ(group_sizes({0, 1}, 0), (std::vector<int>{2}));
  EXPECT_EQ(group_sizes({}, 3), (std::vector<int>{0}));
  EXPECT_FALSE(group_spans({}, 0, 3));
  EXPECT_FALSE(group_spans({0, 1}, -4, 1));
}

}  // namespace
}  // namespace pw
