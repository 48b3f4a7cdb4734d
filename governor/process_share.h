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

namespace pw::gov {

// What a program that this process execs starts inside. The CPU mask survives
// execve by itself (the kernel keeps the calling thread's); what is lost is
// why the mask is narrow, so the new program would take its share of the node
// a second time. LD_PRELOAD is the user's (or the launcher's) choice: a
// program exec'ed without it is not governed, and nothing is added for it.
struct ExecShare {
  enum class Mask {
    kAsIs,      // leave the calling thread's mask
    kShare,     // the share: the calling thread may be a pinned pool thread
    kAffinity,  // the affinity the process was given, before its share
  };
  Mask mask = Mask::kAsIs;
  bool mark = false;  // name the share in the program's environment
};

// confined: this process narrowed itself to its share (a launcher rank, a node
// registry member, a quota). inside: it lives inside another process's share
// (forked or exec'ed by one). same_process: the exec replaces this process's
// own image (not a child's after fork or vfork). launcher_rank: the program's
// environment names a launcher rank that ours does not (a launcher starting
// its ranks: they divide the node themselves). governed: its environment
// preloads parwidth. The one decision for a child's mask: posix_spawn asks it
// too (never the same process; its "as is" is the process's affinity, since
// the spawning thread may be a pinned pool thread).
ExecShare exec_share(bool confined, bool inside, bool same_process, bool launcher_rank,
                     bool governed);

}  // namespace pw::gov
