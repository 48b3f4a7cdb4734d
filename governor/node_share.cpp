// governor/node_share: dividing shared cores among the node registry's members.
#include "governor/node_share.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/group_sizes.h"

namespace pw::gov {
namespace {

bool core_less(const NodeCore& a, const NodeCore& b) {
  return a.socket != b.socket ? a.socket < b.socket : a.cpu < b.cpu;
}

}  // namespace

NodeShare node_share(const std::vector<NodeMember>& members, size_t self) {
  NodeShare out;
  if (self >= members.size()) return out;
  // Arrival order: position of each member.
  std::vector<size_t> order(members.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const NodeMember& x = members[a];
    const NodeMember& y = members[b];
    return x.start != y.start ? x.start < y.start : x.pid < y.pid;
  });
  std::vector<int> position(members.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);

  std::vector<std::vector<int>> cpus_of(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    for (const NodeCore& c : members[i].cores) cpus_of[i].push_back(c.cpu);
    std::sort(cpus_of[i].begin(), cpus_of[i].end());
  }

  // Regions of this member's cores: who else may use each core.
  std::map<std::vector<int>, std::vector<NodeCore>> regions;
  std::set<int> sharing;
  std::vector<NodeCore> mine = members[self].cores;
  std::sort(mine.begin(), mine.end(), core_less);
  mine.erase(std::unique(mine.begin(), mine.end(),
                         [](const NodeCore& a, const NodeCore& b) { return a.cpu == b.cpu; }),
             mine.end());
  for (const NodeCore& c : mine) {
    std::vector<int> who;
    for (size_t i = 0; i < members.size(); ++i)
      if (std::binary_search(cpus_of[i].begin(), cpus_of[i].end(), c.cpu))
        who.push_back(position[i]);
    std::sort(who.begin(), who.end());
    sharing.insert(who.begin(), who.end());
    regions[who].push_back(c);
  }

  const int me = position[self];
  std::vector<NodeCore> taken;
  double worth = 0;
  double split_worth = 0;  // what a split of every region would give it
  int servers = 0;         // members of the time-shared regions
  for (auto& [who, cores] : regions) {
    const int k = static_cast<int>(who.size());
    const int n = static_cast<int>(cores.size());
    const int r = static_cast<int>(std::find(who.begin(), who.end(), me) - who.begin());
    const bool all_serve = std::all_of(who.begin(), who.end(), [&](int pos) {
      return members[order[static_cast<size_t>(pos)]].serves;
    });
    if (k == 1) {
      taken.insert(taken.end(), cores.begin(), cores.end());
      worth += n;
      split_worth += n;
    } else if (k > n) {
      split_worth += static_cast<double>(n) / k;
      if (all_serve) {
        worth += n;
      } else {
        out.overlap = true;
        worth += static_cast<double>(n) / k;
      }
      taken.insert(taken.end(), cores.begin(), cores.end());
    } else {
      std::vector<int> socket_of;
      socket_of.reserve(cores.size());
      for (const auto& c : cores) socket_of.push_back(c.socket);
      const std::vector<int> sizes = group_sizes(socket_of, k);
      int at = 0;
      for (int i = 0; i < r; ++i) at += sizes[static_cast<size_t>(i)];
      split_worth += sizes[static_cast<size_t>(r)];
      if (all_serve) {
        taken.insert(taken.end(), cores.begin(), cores.end());
        worth += n;
      } else {
        taken.insert(taken.end(), cores.begin() + at, cores.begin() + at + sizes[r]);
        worth += sizes[static_cast<size_t>(r)];
      }
    }
    if (k > 1 && all_serve) {
      out.time_shared = true;
      servers = std::max(servers, k);
    }
  }
  // 1e-9: two thirds of a core three times is two cores, not one.
  out.cores_worth = std::max(1, static_cast<int>(worth + 1e-9));
  if (out.time_shared) out.team_worth = std::max(1, static_cast<int>(split_worth + 1e-9));
  std::sort(taken.begin(), taken.end(), core_less);
  for (const NodeCore& c : taken) out.cpus.push_back(c.cpu);
  out.size = static_cast<int>(sharing.size());
  out.rank = static_cast<int>(std::distance(sharing.begin(), sharing.find(me)));
  out.note = "node registry: member " + std::to_string(out.rank + 1) + " of " +
             std::to_string(out.size) + " sharing these cores -> " +
             std::to_string(out.cpus.size()) + " of " + std::to_string(mine.size()) + " cores" +
             (out.overlap ? " (more members than cores: shared by them, " +
                                std::to_string(out.cores_worth) + " cores' worth of threads each)"
                          : "") +
             (out.time_shared ? " (" + std::to_string(servers) +
                                    " servers: shared by time, each as wide as the cores, its "
                                    "OpenMP teams " +
                                    std::to_string(out.team_worth) + " cores' worth)"
                              : "");
  return out;
}

NodeShare node_share_expected(const std::vector<NodeMember>& members, size_t self, int expected) {
  if (self >= members.size() || expected <= static_cast<int>(members.size()))
    return node_share(members, self);
  std::vector<NodeMember> all = members;
  unsigned long long last = 0;
  long pid = 0;
  for (const NodeMember& m : members) {
    last = std::max(last, m.start);
    pid = std::max(pid, m.pid);
  }
  NodeMember later = members[self];
  later.start = last + 1;  // after everyone present, in the order they are added
  for (int i = static_cast<int>(members.size()); i < expected; ++i) {
    later.pid = ++pid;
    all.push_back(later);
  }
  NodeShare s = node_share(all, self);
  s.note = "node registry: " + std::to_string(members.size()) + " of " + std::to_string(expected) +
           " expected members here (PARWIDTH_NODE_EXPECT) -> " + std::to_string(s.cpus.size()) +
           " of " + std::to_string(members[self].cores.size()) + " cores" +
           (s.overlap ? " (shared, " + std::to_string(s.cores_worth) + " cores' worth)" : "");
  return s;
}

}  // namespace pw::gov
