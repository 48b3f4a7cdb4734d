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

// How much slower an operator runs on a team of `threads` than on a team of
// `cores` threads (1 when the team fits the cores).
double oversub_factor(const MachineModel& m, const OpCost& o, int threads, int cores,
                      bool team_asleep) {
  if (threads <= cores) return 1.0;
  const double fit = op_seconds(m, o.flops, o.bytes, cores, team_asleep);
  const double over = op_seconds(m, o.flops, o.bytes, threads, team_asleep);
  return fit > 0 ? std::max(1.0, over / fit) : 1.0;
}

}  // namespace

double simulate(const CostGraph& g, int pools, int threads, const MachineModel& m) {
  const size_t n = g.ops.size();
  if (n == 0 || pools < 1 || threads < 1) return -1;
  std::vector<uint32_t> order;
  std::vector<std::vector<uint32_t>> succs;
  if (!topo_order(g, &order, &succs)) return -1;

  // Whether this plan's teams sleep between operators (libgomp's rule).
  const bool asleep = teams_sleep(m, pools, threads);
  std::vector<double> alone(n);
  for (size_t v = 0; v < n; ++v)
    alone[v] =
        g.ops[v].folded ? 0.0 : op_seconds(m, g.ops[v].flops, g.ops[v].bytes, threads, asleep);

  std::vector<uint32_t> waiting(n, 0);
  for (size_t v = 0; v < n; ++v) waiting[v] = static_cast<uint32_t>(g.ops[v].preds.size());
  // First come, first served (schedule.h: none of the executors parwidth
  // governs orders ready operators by the critical path).
  std::vector<uint32_t> ready;  // append-only; ready[head..] wait, in order
  size_t head = 0;
  for (size_t v = 0; v < n; ++v)
    if (waiting[v] == 0) ready.push_back(static_cast<uint32_t>(v));

  struct Running {
    uint32_t op;
    int pool;
    double dispatch;  // seconds of the executor's bookkeeping left (serialised)
    double left;      // seconds of work at the speed alone
  };
  std::vector<Running> running;
  const int cores = std::max(1, m.cores);
  const int d = threads;
  const double alone_cores = std::min(d, cores);
  // A pool that has just finished an operator takes the next ready one itself;
  // a pool that was already idle sleeps and must first be woken (a futex wake
  // and a context switch: m.wake_s). At the start every pool is awake.
  std::vector<char> busy(static_cast<size_t>(pools), 0), awake(static_cast<size_t>(pools), 1);
  // Seconds a pool owes for signalling sleeping pools, paid before its next operator.
  std::vector<double> owed(static_cast<size_t>(pools), 0.0);
  double now = 0;
  size_t done = 0;
  while (done < n) {
    while (static_cast<int>(running.size()) < pools && head < ready.size()) {
      const uint32_t next = ready[head++];
      int pool = -1;
      for (int q = 0; q < pools && pool < 0; ++q)
        if (!busy[static_cast<size_t>(q)] && awake[static_cast<size_t>(q)]) pool = q;
      const bool wake = pool < 0;
      for (int q = 0; q < pools && pool < 0; ++q)
        if (!busy[static_cast<size_t>(q)]) pool = q;
      busy[static_cast<size_t>(pool)] = 1;
      const bool costs = !g.ops[next].folded;
      // The executor's per-operator bookkeeping (dequeue, successor counts,
      // notify) runs under its one lock: pools take turns at it.
      const double dispatch = costs ? std::min(m.op_overhead_s, alone[next]) : 0.0;
      const double extra = (wake && costs ? m.wake_s : 0.0) + owed[static_cast<size_t>(pool)];
      owed[static_cast<size_t>(pool)] = 0;
      running.push_back({next, pool, dispatch, alone[next] - dispatch + extra});
    }
    // Pools left without work fall asleep.
    std::fill(awake.begin(), awake.end(), 0);
    if (running.empty()) return -1;  // cannot happen on a DAG
    const int demand = d * static_cast<int>(running.size());
    const double share = demand <= cores
                             ? 1.0
                             : std::min(1.0, cores * static_cast<double>(d) / demand / alone_cores);
    // Teams that together oversubscribe the cores also pay what one team of that
    // many threads pays over a team of `cores` (preempted threads holding up
    // barriers): the model's own oversubscribed times, per operator size.
    std::vector<double> rate(running.size(), share);
    if (demand > cores) {
      for (size_t i = 0; i < running.size(); ++i) {
        const OpCost& o = g.ops[running[i].op];
        if (o.folded) continue;
        rate[i] = share * oversub_factor(m, o, d, cores, asleep) /
                  oversub_factor(m, o, demand, cores, asleep);
      }
    }
    // A socket's memory is shared (a layout over sockets only: model_placed):
    // operators running at once on one socket that together ask more bytes
    // per second than its roofline all slow down in proportion. An
    // operator's demand is its bytes over its time alone.
    if (m.team_bytes_per_s_max > 0 && m.sockets_used > 0 && running.size() > 1) {
      const int used = std::min(m.sockets_used, pools);
      std::vector<double> demand_on(static_cast<size_t>(used), 0.0);
      auto socket_of = [&](int pool) { return static_cast<size_t>(pool * used / pools); };
      for (const Running& r : running) {
        const OpCost& o = g.ops[r.op];
        if (!o.folded && r.dispatch <= 0 && alone[r.op] > 0)
          demand_on[socket_of(r.pool)] += o.bytes / alone[r.op];
      }
      for (size_t i = 0; i < running.size(); ++i) {
        const double want = demand_on[socket_of(running[i].pool)];
        if (want > m.team_bytes_per_s_max) rate[i] *= m.team_bytes_per_s_max / want;
      }
    }
    // Operators still in their bookkeeping share the lock and use no team yet.
    size_t locked = 0;
    for (const Running& r : running) locked += r.dispatch > 0;
    const double lock_rate = locked ? 1.0 / static_cast<double>(locked) : 1.0;
    double step = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < running.size(); ++i)
      step = std::min(step, running[i].dispatch > 0 ? running[i].dispatch / lock_rate
                                                    : running[i].left / rate[i]);
    now += step;
    // Operators finishing at this instant, in index order, release their successors.
    std::vector<std::pair<uint32_t, int>> finished;  // (operator, its pool)
    std::vector<Running> still;
    for (size_t i = 0; i < running.size(); ++i) {
      Running r = running[i];
      if (r.dispatch > 0) {
        r.dispatch -= step * lock_rate;
        if (r.dispatch <= 1e-15) r.dispatch = 0;
      } else {
        r.left -= step * rate[i];
      }
      if (r.dispatch <= 0 && r.left <= 1e-15 * std::max(1.0, alone[r.op])) {
        finished.emplace_back(r.op, r.pool);
        busy[static_cast<size_t>(r.pool)] = 0;
        awake[static_cast<size_t>(r.pool)] = 1;
      } else {
        still.push_back(r);
      }
    }
    running.swap(still);
    std::sort(finished.begin(), finished.end());
    int sleeping = 0;
    for (int q = 0; q < pools; ++q)
      sleeping += !busy[static_cast<size_t>(q)] && !awake[static_cast<size_t>(q)];
    for (const auto& [v, pool] : finished) {
      ++done;
      int released = 0;
      for (uint32_t w : succs[v])
        if (--waiting[w] == 0) ready.push_back(w), ++released;
      // The executor signals a sleeping pool for the work it made ready (one
      // per operator, as many as there are sleepers), also when this pool then
      // takes that work itself. A folded operator ran at load: it signals nobody.
      if (!g.ops[v].folded)
        owed[static_cast<size_t>(pool)] += m.notify_s * std::min(sleeping, released);
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
    const long ti = static_cast<long>(c[i].pools) * c[i].threads;
    const long tb = static_cast<long>(c[best].pools) * c[best].threads;
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
