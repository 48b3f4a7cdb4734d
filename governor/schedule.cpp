// governor/schedule: list scheduling of a cost graph over pools of threads.
#include "governor/schedule.h"

#include <algorithm>
#include <limits>

namespace pw::gov {
namespace {

// Kahn's order; false on a cycle or an out-of-range predecessor.
bool topo_order(const CostGraph& g, std::vector<uint32_t>* order,
                std::vector<std::vector<uint32_t>>* succs) {
  const size_t n = g.ops.size();
  std::vector<uint32_t> indeg(n, 0);
  succs->assign(n, {});
  for (size_t v = 0; v < n; ++v) {
    for (uint32_t u : g.ops[v].preds) {
      if (u >= n || u == v) return false;
      (*succs)[u].push_back(static_cast<uint32_t>(v));
      ++indeg[v];
    }
  }
  order->clear();
  for (size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) order->push_back(static_cast<uint32_t>(v));
  for (size_t i = 0; i < order->size(); ++i) {
    for (uint32_t w : (*succs)[(*order)[i]])
      if (--indeg[w] == 0) order->push_back(w);
  }
  return order->size() == n;
}

}  // namespace

double simulate(const CostGraph& g, int pools, int intra, const MachineModel& m) {
  const size_t n = g.ops.size();
  if (n == 0 || pools < 1 || intra < 1) return -1;
  std::vector<uint32_t> order;
  std::vector<std::vector<uint32_t>> succs;
  if (!topo_order(g, &order, &succs)) return -1;

  std::vector<double> alone(n), level(n, 0);
  for (size_t v = 0; v < n; ++v) alone[v] = op_seconds(m, g.ops[v].flops, g.ops[v].bytes, intra);
  for (size_t i = n; i-- > 0;) {
    const uint32_t v = order[i];
    double tail = 0;
    for (uint32_t w : succs[v]) tail = std::max(tail, level[w]);
    level[v] = alone[v] + tail;
  }

  std::vector<uint32_t> waiting(n, 0);
  for (size_t v = 0; v < n; ++v) waiting[v] = static_cast<uint32_t>(g.ops[v].preds.size());
  std::vector<uint32_t> ready;
  for (size_t v = 0; v < n; ++v)
    if (waiting[v] == 0) ready.push_back(static_cast<uint32_t>(v));

  struct Running {
    uint32_t op;
    double left;  // seconds of work at the speed alone
  };
  std::vector<Running> running;
  const int cores = std::max(1, m.cores);
  const int d = intra;
  const double alone_cores = std::min(d, cores);
  double now = 0;
  size_t done = 0;
  while (done < n) {
    while (static_cast<int>(running.size()) < pools && !ready.empty()) {
      auto best = ready.begin();
      for (auto it = ready.begin(); it != ready.end(); ++it)
        if (level[*it] > level[*best] || (level[*it] == level[*best] && *it < *best)) best = it;
      running.push_back({*best, alone[*best]});
      ready.erase(best);
    }
    if (running.empty()) return -1;  // cannot happen on a DAG
    const double demand = static_cast<double>(d) * static_cast<double>(running.size());
    const double rate = demand <= cores ? 1.0 : std::min(1.0, cores * d / demand / alone_cores);
    double step = std::numeric_limits<double>::infinity();
    for (const Running& r : running) step = std::min(step, r.left / rate);
    now += step;
    // Operators finishing at this instant, in index order, release their successors.
    std::vector<uint32_t> finished;
    for (auto it = running.begin(); it != running.end();) {
      it->left -= step * rate;
      if (it->left <= 1e-15 * std::max(1.0, alone[it->op])) {
        finished.push_back(it->op);
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(finished.begin(), finished.end());
    for (uint32_t v : finished) {
      ++done;
      for (uint32_t w : succs[v])
        if (--waiting[w] == 0) ready.push_back(w);
    }
  }
  return now;
}

size_t candidate_choose(const std::vector<Candidate>& c, double tie) {
  if (c.empty()) return 0;
  double fastest = c[0].seconds;
  for (const Candidate& x : c) fastest = std::min(fastest, x.seconds);
  size_t best = c.size();
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i].seconds > fastest * (1 + tie)) continue;
    if (best == c.size()) {
      best = i;
      continue;
    }
    const long ti = static_cast<long>(c[i].pools) * c[i].intra;
    const long tb = static_cast<long>(c[best].pools) * c[best].intra;
    if (ti < tb || (ti == tb && c[i].pools < c[best].pools) ||
        (ti == tb && c[i].pools == c[best].pools && c[i].seconds < c[best].seconds))
      best = i;
  }
  return best;
}

std::vector<Candidate> candidates_predict(const CostGraph& g, int cores, int max_pools,
                                          const MachineModel& m) {
  std::vector<Candidate> out;
  const int limit = 2 * std::max(1, cores);
  const int top = static_cast<int>(
      std::min<size_t>(g.ops.size(), static_cast<size_t>(std::clamp(max_pools, 1, limit))));
  for (int p = 1; p <= top; ++p) {
    for (int t = 1; p * t <= limit; ++t) {
      const double s = simulate(g, p, t, m);
      if (s < 0) return {};
      out.push_back({p, t, s});
    }
  }
  return out;
}

ModelChoice model_choose(const CostGraph& g, int cores, int max_pools, const MachineModel& m) {
  ModelChoice c;
  c.candidates = candidates_predict(g, cores, max_pools, m);
  if (!c.candidates.empty()) c.chosen = static_cast<int>(candidate_choose(c.candidates));
  return c;
}

}  // namespace pw::gov
