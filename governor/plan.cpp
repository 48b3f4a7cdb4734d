// governor/plan: the plan rule of DESIGN.md and the socket-aware placement.
#include "governor/plan.h"

#include <algorithm>
#include <climits>

namespace pw::gov {
namespace {

// A pool over slots [a, b) spans a socket boundary if one lies strictly inside.
bool spans(int a, int b, const std::vector<int>& boundaries) {
  for (int x : boundaries)
    if (x > a && x < b) return true;
  return false;
}

}  // namespace

std::vector<int> pool_sizes_for(int slots, int pools, const std::vector<int>& boundaries) {
  pools = std::max(1, std::min(pools, std::max(1, slots)));
  const int small = slots / pools;
  const int bigs = slots % pools;  // this many pools get one extra slot
  // State (i, j): i pools placed, j of them big, so the next pool starts at
  // i*small + j. best[i][j] = fewest spanning pools among the rest.
  const int inf = INT_MAX / 2;
  std::vector<std::vector<int>> best(pools + 1, std::vector<int>(bigs + 1, inf));
  best[pools][bigs] = 0;
  auto cost = [&](int i, int j, bool big) {
    const int start = i * small + j;
    const int next = best[i + 1][j + (big ? 1 : 0)];
    if (next >= inf) return inf;
    return next + (spans(start, start + small + (big ? 1 : 0), boundaries) ? 1 : 0);
  };
  for (int i = pools - 1; i >= 0; --i) {
    for (int j = 0; j <= std::min(i, bigs); ++j) {
      if (j < bigs) best[i][j] = std::min(best[i][j], cost(i, j, true));
      if (i - j < pools - bigs) best[i][j] = std::min(best[i][j], cost(i, j, false));
    }
  }
  // Walk forward; among optimal arrangements put big pools first.
  std::vector<int> sizes;
  for (int i = 0, j = 0; i < pools; ++i) {
    const bool big = j < bigs && cost(i, j, true) == best[i][j];
    sizes.push_back(small + (big ? 1 : 0));
    j += big ? 1 : 0;
  }
  return sizes;
}

Plan plan_for(const BudgetView& budget, const WidthView& width, const PlanOptions& opt) {
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

  if (opt.intra > 0) {
    p.threads = opt.intra;
    p.notes.push_back("threads = " + std::to_string(opt.intra) + " (PARWIDTH_INTRA)");
  } else {
    p.threads = std::max(1, p.slots / p.pools);
    p.notes.push_back("threads = floor(" + std::to_string(p.slots) + " slots / " +
                      std::to_string(p.pools) + " pools) = " + std::to_string(p.threads));
  }

  std::vector<int> boundaries;
  for (int s = 1; s < p.slots; ++s)
    if (slot_socket[s] != slot_socket[s - 1]) boundaries.push_back(s);
  const std::vector<int> sizes = pool_sizes_for(p.slots, p.pools, boundaries);
  int at = 0;
  for (int size : sizes) {
    if (spans(at, at + size, boundaries)) ++p.spanning_pools;
    p.core_sets.emplace_back(slot_cpu.begin() + at, slot_cpu.begin() + at + size);
    at += size;
  }
  return p;
}

}  // namespace pw::gov
