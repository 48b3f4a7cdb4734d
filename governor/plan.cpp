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
  // DP over (pools placed i, big pools used j): the prefix is i*small + j, so
  // the state fixes where the next pool starts. cost = spanning pools so far.
  const int inf = INT_MAX / 2;
  std::vector<std::vector<int>> cost(pools + 1, std::vector<int>(bigs + 1, inf));
  std::vector<std::vector<int>> took_big(pools + 1, std::vector<int>(bigs + 1, 0));
  cost[0][0] = 0;
  for (int i = 0; i < pools; ++i) {
    for (int j = 0; j <= std::min(i, bigs); ++j) {
      if (cost[i][j] >= inf) continue;
      const int start = i * small + j;
      // Prefer a big pool first on ties: deterministic and fills sockets early.
      if (j < bigs) {
        int c = cost[i][j] + (spans(start, start + small + 1, boundaries) ? 1 : 0);
        if (c < cost[i + 1][j + 1]) {
          cost[i + 1][j + 1] = c;
          took_big[i + 1][j + 1] = 1;
        }
      }
      if (i - j < pools - bigs) {
        int c = cost[i][j] + (spans(start, start + small, boundaries) ? 1 : 0);
        if (c < cost[i + 1][j]) {
          cost[i + 1][j] = c;
          took_big[i + 1][j] = 0;
        }
      }
    }
  }
  std::vector<int> sizes(pools);
  for (int i = pools, j = bigs; i > 0; --i) {
    const int big = took_big[i][j];
    sizes[i - 1] = small + big;
    j -= big;
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
                      ", 1, min(max level width " + std::to_string(width.max_level_width) +
                      ", " + std::to_string(p.slots) + " slots)) = " + std::to_string(p.pools));
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
