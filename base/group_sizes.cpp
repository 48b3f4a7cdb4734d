// base/group_sizes: balanced contiguous groups, fewest spanning a socket boundary.
#include "base/group_sizes.h"

#include <algorithm>
#include <climits>

namespace pw {

bool group_spans(const std::vector<int>& socket_of, int a, int b) {
  const int n = static_cast<int>(socket_of.size());
  for (int i = std::max(a + 1, 1); i < std::min(b, n); ++i)
    if (socket_of[static_cast<size_t>(i)] != socket_of[static_cast<size_t>(i) - 1]) return true;
  return false;
}

std::vector<int> group_sizes(const std::vector<int>& socket_of, int groups) {
  const int slots = static_cast<int>(socket_of.size());
  groups = std::max(1, std::min(groups, std::max(1, slots)));
  const int small = slots / groups;
  const int bigs = slots % groups;  // this many groups get one extra slot
  // State (i, j): i groups placed, j of them big, so the next group starts at
  // i * small + j. best[i][j] = fewest spanning groups among the rest.
  const int inf = INT_MAX / 2;
  std::vector<std::vector<int>> best(static_cast<size_t>(groups) + 1,
                                     std::vector<int>(static_cast<size_t>(bigs) + 1, inf));
  best[static_cast<size_t>(groups)][static_cast<size_t>(bigs)] = 0;
  auto cost = [&](int i, int j, bool big) {
    const int start = i * small + j;
    const int next = best[static_cast<size_t>(i) + 1][static_cast<size_t>(j) + (big ? 1 : 0)];
    if (next >= inf) return inf;
    return next + (group_spans(socket_of, start, start + small + (big ? 1 : 0)) ? 1 : 0);
  };
  for (int i = groups - 1; i >= 0; --i) {
    for (int j = 0; j <= std::min(i, bigs); ++j) {
      int& b = best[static_cast<size_t>(i)][static_cast<size_t>(j)];
      if (j < bigs) b = std::min(b, cost(i, j, true));
      if (i - j < groups - bigs) b = std::min(b, cost(i, j, false));
    }
  }
  // Walk forward; among optimal arrangements put big groups first.
  std::vector<int> sizes;
  for (int i = 0, j = 0; i < groups; ++i) {
    const bool big =
        j < bigs && cost(i, j, true) == best[static_cast<size_t>(i)][static_cast<size_t>(j)];
    sizes.push_back(small + (big ? 1 : 0));
    j += big ? 1 : 0;
  }
  return sizes;
}

}  // namespace pw
