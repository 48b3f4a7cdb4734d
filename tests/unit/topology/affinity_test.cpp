// topology/affinity.h: a thread's mask read and set back, any size and fixed, and the
// error contract (EINVAL for a list without a CPU, nothing changed).
#include "topology/affinity.h"

#include <errno.h>
#include <pthread.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace pw::topo {
namespace {

TEST(Affinity, ReadsAndSetsTheCallingThreadsMask) {
  std::vector<int> before;
  ASSERT_EQ(affinity_get(0, &before), 0);
  ASSERT_FALSE(before.empty());
  EXPECT_TRUE(std::is_sorted(before.begin(), before.end()));
  ASSERT_EQ(affinity_set(0, {before[0]}), 0);
  std::vector<int> one;
  ASSERT_EQ(affinity_get(0, &one), 0);
  EXPECT_EQ(one, std::vector<int>{before[0]});
  ASSERT_EQ(affinity_set(0, before), 0);
  std::vector<int> after;
  ASSERT_EQ(affinity_get(0, &after), 0);
  EXPECT_EQ(after, before);
}

TEST(Affinity, ANoCpuListIsInvalidAndChangesNothing) {
  std::vector<int> before, after;
  ASSERT_EQ(affinity_get(0, &before), 0);
  EXPECT_EQ(affinity_set(0, {}), EINVAL);
  EXPECT_EQ(affinity_set(0, {-1}), EINVAL);
  ASSERT_EQ(affinity_get(0, &after), 0);
  EXPECT_EQ(after, before);
}

TEST(Affinity, ACpuBeyondCpuSetSizeIsRefusedByTheKernelNotTruncated) {
  // Only CPU 5000: no machine here has it, so the kernel refuses the whole mask.
  std::vector<int> before, after;
  ASSERT_EQ(affinity_get(0, &before), 0);
  EXPECT_EQ(affinity_set(0, {5000}), EINVAL);
  ASSERT_EQ(affinity_get(0, &after), 0);
  EXPECT_EQ(after, before);
}

TEST(Affinity, FixedVariantsRoundTrip) {
  cpu_set_t set;
  ASSERT_EQ(affinity_get_fixed(0, &set), 0);
  std::vector<int> list;
  ASSERT_EQ(affinity_get(0, &list), 0);
  EXPECT_EQ(CPU_COUNT(&set), static_cast<int>(list.size()));
  EXPECT_EQ(affinity_set_fixed(0, set), 0);
  cpu_set_t none;
  CPU_ZERO(&none);
  EXPECT_EQ(affinity_set_fixed(0, none), EINVAL);
}

TEST(Affinity, AttributeMaskIsTheList) {
  std::vector<int> mine;
  ASSERT_EQ(affinity_get(0, &mine), 0);
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(affinity_attr_set(&attr, {mine.back()}), 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(pthread_attr_getaffinity_np(&attr, sizeof set, &set), 0);
  EXPECT_EQ(CPU_COUNT(&set), 1);
  EXPECT_TRUE(CPU_ISSET(mine.back(), &set));
  EXPECT_EQ(affinity_attr_set(&attr, {}), EINVAL);
  pthread_attr_destroy(&attr);
}

}  // namespace
}  // namespace pw::topo
