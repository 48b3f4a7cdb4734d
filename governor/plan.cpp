// governor/plan: the width rule (docs/design.md, "The plan") and the socket-aware placement.
#include "governor/plan.h"

#include <algorithm>

#include "base/group_sizes.h"

namespace pw::gov {
Plan plan_for(const BudgetView& budget, const GraphWidth& width, const PlanOptions& opt) {
  Plan p;
  // Slots: one per physical core (its first PU), or one per PU with smt.
  std::vector<int> slot_cpu;
  std::vector<int> slot_socket;
  for (const CoreSlot& c : budget.cores) {
    const size_t n = opt.smt ? c.pus.size() : std::min<size_t>(1, c.pus.size());
    for (size_t k = 0; k < n; ++k) {
      slot_cpu.push_back(c.pus[k]);
      slot_socket.push_back(c.socket);
    }
  }
  p.slots = static_cast<int>(slot_cpu.size());
  if (p.slots == 0) {
    p.notes.push_back("empty budget: one pool of one thread, not pinned");
    p.core_sets.emplace_back();
    return p;
  }

  if (opt.pools > 0) {
    p.pools = opt.pools;
    p.notes.push_back("pools = " + std::to_string(opt.pools) + " (PARWIDTH_POOLS)");
    if (p.pools > p.slots) {
      p.notes.push_back("pools clamped from " + std::to_string(p.pools) + " to " +
                        std::to_string(p.slots) + ": one slot per pool at least");
      p.pools = p.slots;
    }
  } else if (width.known) {
    const long hi = std::min<long>(std::max<long>(1, width.max_level_width), p.slots);
    p.pools = static_cast<int>(std::clamp<long>(width.avg_width, 1, hi));
    p.notes.push_back("pools = clamp(avg width " + std::to_string(width.avg_width) +
                      ", 1, min(max level width " + std::to_string(width.max_level_width) + ", " +
                      std::to_string(p.slots) + " slots)) = " + std::to_string(p.pools));
  } else {
    p.pools = 1;
    p.notes.push_back("pools = 1 (no model graph known)");
  }

  if (opt.threads > 0) {
    p.threads = opt.threads;
    p.notes.push_back("threads = " + std::to_string(opt.threads) + " (PARWIDTH_INTRA)");
  } else {
    p.threads = std::max(1, p.slots / p.pools);
    p.notes.push_back("threads = floor(" + std::to_string(p.slots) + " slots / " +
                      std::to_string(p.pools) + " pools) = " + std::to_string(p.threads));
  }

  // Per socket: the slots of each socket, in order, and the first
  // min(pools, sockets) sockets share the pools evenly.
  std::vector<std::vector<int>> by_socket;
  for (size_t i = 0; i < slot_cpu.size(); ++i) {
    if (i == 0 || slot_socket[i] != slot_socket[i - 1]) by_socket.emplace_back();
    by_socket.back().push_back(slot_cpu[i]);
  }
  if (opt.per_socket && by_socket.size() > 1) {
    const int used = std::min<int>(p.pools, static_cast<int>(by_socket.size()));
    for (int u = 0; u < used; ++u) {
      const std::vector<int>& cpus = by_socket[static_cast<size_t>(u)];
      const int mine = p.pools / used + (u < p.pools % used ? 1 : 0);
      const std::vector<int> sizes = group_sizes(std::vector<int>(cpus.size(), 0), mine);
      int at = 0;
      for (int size : sizes) {
        p.core_sets.emplace_back(cpus.begin() + at, cpus.begin() + at + size);
        at += size;
      }
    }
    // group_sizes gives a socket of fewer slots than pools fewer groups.
    while (static_cast<int>(p.core_sets.size()) < p.pools)
      p.core_sets.push_back(p.core_sets.back());
    return p;
  }

  const std::vector<int> sizes = group_sizes(slot_socket, p.pools);
  int at = 0;
  for (int size : sizes) {
    if (group_spans(slot_socket, at, at + size)) ++p.spanning_pools;
    p.core_sets.emplace_back(slot_cpu.begin() + at, slot_cpu.begin() + at + size);
    at += size;
  }
  return p;
}

namespace {

// Every pool's set all of `cpus`, `shared` set, and why in the notes.
Plan on_all(Plan p, const std::vector<int>& cpus, const char* why) {
  if (cpus.empty()) return p;
  for (std::vector<int>& set : p.core_sets) set = cpus;
  p.shared = true;
  p.notes.push_back(std::string(why) + ": each pool may use " + std::to_string(cpus.size()) +
                    " CPUs, the kernel balances the threads");
  return p;
}

}  // namespace

Plan plan_shared(Plan p, const std::vector<int>& cpus) {
  return on_all(std::move(p), cpus, "cores shared with more governed processes than cores");
}

Plan plan_time_shared(Plan p) {
  std::vector<int> cpus;
  for (const std::vector<int>& set : p.core_sets) cpus.insert(cpus.end(), set.begin(), set.end());
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return on_all(std::move(p), cpus, "cores shared by time with other servers");
}

}  // namespace pw::gov
