// governor/process_share: which CPUs the whole process (its main thread, the
// threads nobody pinned, its children) lives on when its share of the node is
// smaller than its affinity.
//
// Pure: CPU lists in (sorted or not), CPU lists out. No error states: an empty
// result means "leave the process's threads as they are".
#pragma once

#include <vector>

namespace pw::gov {

// The mask for the process's unpinned threads: the share's PUs that lie inside
// the affinity, when they are a non-empty strict subset of it (launcher ranks,
// node registry members, a cgroup quota). Empty when the share is the whole
// affinity, or has none of it: nothing to confine.
std::vector<int> process_mask(const std::vector<int>& affinity, const std::vector<int>& share);

// Whether a thread whose mask is `thread` moves with the process when the
// process's mask changes from `from`: it does unless somebody pinned it
// narrower (its mask is not a superset of `from`). Pool threads are narrower:
// the plan moves them, not this rule.
bool thread_follows(const std::vector<int>& thread, const std::vector<int>& from);

}  // namespace pw::gov

namespace pw::gov {

// Whether a process that a launcher's variables describe as a local rank is
// in fact a child of that rank (a worker it exec'ed, a tool it ran), already
// inside the rank's share, which it must not divide again: its parent carries
// the same launcher variables, the two affinities are equal, and both are
// narrower than the node (what the cgroup cpuset allows of the machine). A
// rank started through a shell that parwidth did not confine has the node's
// affinity and divides as usual.
bool inside_parent_rank(bool parent_same_rank, const std::vector<int>& affinity,
                        const std::vector<int>& parent_affinity, const std::vector<int>& node);

}  // namespace pw::gov
