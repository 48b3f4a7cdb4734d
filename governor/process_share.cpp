// governor/process_share: the process's own mask inside its share.
#include "governor/process_share.h"

#include <algorithm>

namespace pw::gov {
namespace {

std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::vector<int> process_mask(const std::vector<int>& affinity, const std::vector<int>& share) {
  const std::vector<int> a = sorted_unique(affinity);
  const std::vector<int> s = sorted_unique(share);
  std::vector<int> in;
  std::set_intersection(a.begin(), a.end(), s.begin(), s.end(), std::back_inserter(in));
  if (in.empty() || in.size() == a.size()) return {};
  return in;
}

bool thread_follows(const std::vector<int>& thread, const std::vector<int>& from) {
  const std::vector<int> t = sorted_unique(thread);
  const std::vector<int> f = sorted_unique(from);
  return !f.empty() && std::includes(t.begin(), t.end(), f.begin(), f.end());
}

}  // namespace pw::gov

namespace pw::gov {

bool inside_parent_rank(bool parent_same_rank, const std::vector<int>& affinity,
                        const std::vector<int>& parent_affinity, const std::vector<int>& node) {
  if (!parent_same_rank) return false;
  const std::vector<int> a = sorted_unique(affinity);
  if (a.empty() || a != sorted_unique(parent_affinity)) return false;
  const std::vector<int> n = sorted_unique(node);
  return std::includes(n.begin(), n.end(), a.begin(), a.end()) && a.size() < n.size();
}

}  // namespace pw::gov

namespace pw::gov {

ExecShare exec_share(bool confined, bool inside, bool same_process, bool launcher_rank,
                     bool governed) {
  ExecShare e;
  if (!confined && !inside) return e;
  if (launcher_rank) {
    e.mask = ExecShare::Mask::kAffinity;
    return e;
  }
  // The process's new image takes its share again from what it was given
  // (the same launcher variables, the registry): carried over, the share
  // would be divided twice, and a registry member could never grow back.
  if (same_process && confined) {
    e.mask = ExecShare::Mask::kAffinity;
    return e;
  }
  // A child (a worker a launcher forked and exec'ed with a cleaned
  // environment, a tool run through a shell) is part of this process's work.
  e.mask = ExecShare::Mask::kShare;
  e.mark = governed;
  return e;
}

}  // namespace pw::gov
