// base/group_sizes: contiguous groups of slots laid over sockets, as few of them
// spanning two sockets as the sizes allow. The plan places its pools this way
// (governor/plan.cpp), the node registry its members (governor/node_share.cpp)
// and the budget a launcher's local ranks (topology/budget.cpp).
#pragma once

#include <vector>

namespace pw {

// The sizes, in order, of `groups` balanced contiguous groups over the slots
// (socket_of[i]: the socket of slot i, in placement order): n / groups slots
// each, n % groups of them one larger, arranged so that the fewest groups
// span a socket boundary; among equally good arrangements, larger groups
// come first. groups is clamped to 1..max(1, n).
std::vector<int> group_sizes(const std::vector<int>& socket_of, int groups);

// Whether slots [a, b) lie on more than one socket.
bool group_spans(const std::vector<int>& socket_of, int a, int b);

}  // namespace pw
