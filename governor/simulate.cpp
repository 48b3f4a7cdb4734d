// governor/simulate: list scheduling over an event queue. O((n + e) log n).
#include "governor/simulate.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>

namespace pw::gov {

double op_time(double flops, int intra, const TimeModel& m) {
  const int t = std::max(1, intra);
  const double s = std::min(1.0, std::max(0.0, m.serial));
  const double rate = m.flops_per_s > 0 ? m.flops_per_s : 1.0;
  const double w = flops > 0 ? flops / rate : 0.0;
  return std::max(0.0, m.overhead_s) + w * (s + (1 - s) / t);
}

bool simulate(const std::vector<SimTask>& tasks, int pools, int intra, const TimeModel& m,
              SimResult* out) {
  const size_t n = tasks.size();
  pools = std::max(1, pools);
  std::vector<double> time(n);
  std::vector<uint32_t> indeg(n, 0);
  std::vector<std::vector<uint32_t>> succ(n);
  for (size_t v = 0; v < n; ++v) {
    time[v] = op_time(tasks[v].flops, intra, m);
    for (uint32_t u : tasks[v].preds) {
      if (u >= n) return false;
      succ[u].push_back(uint32_t(v));
      ++indeg[v];
    }
  }
  // Topological order, then bottom levels (longest path from a task to the end) backwards.
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<uint32_t> deg = indeg;
  for (size_t v = 0; v < n; ++v)
    if (!deg[v]) order.push_back(uint32_t(v));
  for (size_t h = 0; h < order.size(); ++h)
    for (uint32_t w : succ[order[h]])
      if (--deg[w] == 0) order.push_back(w);
  if (order.size() != n) return false;
  std::vector<double> bottom(n, 0);
  SimResult r;
  for (size_t i = n; i-- > 0;) {
    const uint32_t v = order[i];
    double longest = 0;
    for (uint32_t w : succ[v]) longest = std::max(longest, bottom[w]);
    bottom[v] = time[v] + longest;
    r.span_s = std::max(r.span_s, bottom[v]);
    r.work_s += time[v];
  }

  // Ready tasks: highest bottom level first, then lowest index.
  auto later = [&](uint32_t a, uint32_t b) {
    return bottom[a] != bottom[b] ? bottom[a] < bottom[b] : a > b;
  };
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(later)> ready(later);
  // Running tasks by finish time (then index, for a deterministic order).
  using Event = std::pair<double, uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> running;
  for (size_t v = 0; v < n; ++v)
    if (!indeg[v]) ready.push(uint32_t(v));
  int free_pools = pools;
  double now = 0;
  while (!ready.empty() || !running.empty()) {
    while (free_pools > 0 && !ready.empty()) {
      const uint32_t v = ready.top();
      ready.pop();
      running.push({now + time[v], v});
      --free_pools;
    }
    // Finish everything that ends at the next finish time, then schedule again.
    now = running.top().first;
    while (!running.empty() && running.top().first <= now) {
      const uint32_t v = running.top().second;
      running.pop();
      ++free_pools;
      for (uint32_t w : succ[v])
        if (--indeg[w] == 0) ready.push(w);
    }
  }
  r.makespan_s = now;
  *out = r;
  return true;
}

}  // namespace pw::gov
