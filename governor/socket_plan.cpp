// governor/socket_plan: per-socket and spanning layouts, SMT siblings.
#include "governor/socket_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace pw::gov {
namespace {

// A socket's memory, where no calibration measured it: eight cores' streams.
constexpr double kBuiltinSocketStreams = 8;

// Column t (1-based) of a row of times, the last one beyond it.
double col(const std::vector<double>& v, int t) {
  if (v.empty()) return 0;
  return v[std::min(v.size(), static_cast<size_t>(std::max(1, t))) - 1];
}

// Times for teams 1..2 x cores from a function of the team size.
template <class F>
std::vector<double> columns(int cores, F f) {
  std::vector<double> out;
  for (int t = 1; t <= 2 * cores; ++t) out.push_back(f(t));
  return out;
}

// m's time at t threads on `cores` of its cores: m's own where t fits them,
// beyond them m's time at the same relative oversubscription of all its cores.
double sub_budget(const std::vector<double>& v, int t, int cores, int all) {
  if (t <= cores) return col(v, t);
  const double base = col(v, cores), full = col(v, all);
  // Rounded to the nearest, in integers: lround would make libparwidth.so need libm.
  const int j = all + (2 * (t - cores) * all + cores) / (2 * cores);
  return full > 0 ? base * col(v, j) / full : base;
}

std::string pct(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.0f%%", 100 * x);
  return buf;
}

}  // namespace

SocketShape socket_shape(const BudgetView& b, bool smt) {
  SocketShape s;
  std::map<int, int> slots;  // socket -> slots
  int pus = 0;
  for (const CoreSlot& c : b.cores) {
    if (c.pus.empty()) continue;
    const int n = smt ? static_cast<int>(c.pus.size()) : 1;
    slots[c.socket] += n;
    pus = pus == 0 ? n : std::min(pus, n);
  }
  s.sockets = std::max<int>(1, static_cast<int>(slots.size()));
  s.slots_per_socket = 0;
  for (const auto& [socket, n] : slots)
    s.slots_per_socket = s.slots_per_socket == 0 ? n : std::min(s.slots_per_socket, n);
  s.slots_per_socket = std::max(1, s.slots_per_socket);
  s.pus_per_core = std::max(1, pus);
  return s;
}

bool per_socket_fits(const SocketShape& shape, int pools, int threads) {
  if (shape.sockets <= 1 || pools < 1 || threads < 1) return false;
  const int used = std::min(pools, shape.sockets);
  return threads <= shape.slots_per_socket && pools % used == 0 &&
         pools / used <= shape.slots_per_socket;
}

MachineModel model_smt(const MachineModel& m, int pus_per_core) {
  if (pus_per_core <= 1) return m;
  MachineModel o = m;
  const int cores = std::max(1, m.cores);
  const int slots = cores * pus_per_core;
  o.cores = slots;
  // A team of t slots: c cores, t - c siblings beside them; past the slots,
  // the cores' time (with every sibling) at m's oversubscription ratio.
  auto on = [&](const std::vector<double>& v, int t) {
    const int c = std::min(cores, (t + pus_per_core - 1) / pus_per_core);
    const int sib = std::min(t, slots) - c;
    const double gain = 1 + m.smt_gain * static_cast<double>(sib) / c;
    if (t <= slots) return col(v, c) / gain;
    const int j = cores + (2 * (t - slots) + pus_per_core) / (2 * pus_per_core);
    const double full = col(v, cores);
    return full > 0 ? col(v, cores) / gain * col(v, j) / full : col(v, cores) / gain;
  };
  for (SizeRow& r : o.rows) {
    const std::vector<double> v = r.seconds;
    r.seconds = columns(slots, [&](int t) { return on(v, t); });
  }
  // The fork and join: of the team's cores' threads.
  if (!m.region_s.empty())
    o.region_s = columns(slots, [&](int t) {
      const int c = std::min(cores, (t + pus_per_core - 1) / pus_per_core);
      return t <= slots ? col(m.region_s, c)
                        : sub_budget(m.region_s, cores + (t - slots), cores, cores);
    });
  char buf[96];
  snprintf(buf, sizeof buf, "; SMT: %d siblings a core, each adding %s of a core (%s)",
           pus_per_core, pct(m.smt_gain).c_str(), m.smt_measured ? "measured" : "built in");
  o.detail += buf;
  return o;
}

MachineModel model_placed(const MachineModel& m, int slots_per_socket, int sockets_used,
                          bool spanning) {
  MachineModel o = m;
  const int all = std::max(1, m.cores);
  const int spc = std::clamp(slots_per_socket, 1, all);
  o.team_bytes_per_s_max =
      m.socket_bytes_per_s > 0 ? m.socket_bytes_per_s : kBuiltinSocketStreams * m.bytes_per_s;
  o.sockets_used = spanning ? std::max(1, (all + spc - 1) / spc) : std::max(1, sockets_used);
  if (!spanning) {
    const int cores = std::clamp(spc * std::max(1, sockets_used), 1, all);
    if (cores == all) return o;
    o.cores = cores;
    for (SizeRow& r : o.rows) {
      const std::vector<double> v = r.seconds;
      r.seconds = columns(cores, [&](int t) { return sub_budget(v, t, cores, all); });
    }
    if (!m.region_s.empty())
      o.region_s = columns(cores, [&](int t) { return sub_budget(m.region_s, t, cores, all); });
    const int cpus = m.cpus > 0 ? m.cpus : all;
    o.cpus = std::max(1, static_cast<int>(static_cast<long>(cpus) * cores / all));
    return o;
  }
  if (m.span_measured) return o;  // the rows' teams beyond a socket were measured across
  // span_factor is two sockets' (half the team's memory remote); a team over k
  // sockets has (k - 1) / k of it remote and pays in proportion.
  const int sockets = std::max(2, (all + spc - 1) / spc);
  auto factor = [&](size_t col_index) {
    const int t = static_cast<int>(col_index) + 1;
    const int k = std::clamp((t + spc - 1) / spc, 2, sockets);
    return 1 + (m.span_factor - 1) * 2.0 * (k - 1) / k;
  };
  for (SizeRow& r : o.rows)
    for (size_t k = static_cast<size_t>(spc); k < r.seconds.size(); ++k)
      r.seconds[k] = r.seconds[k] * factor(k) + m.span_region_s;
  for (size_t k = static_cast<size_t>(spc); k < o.region_s.size(); ++k)
    o.region_s[k] += m.span_region_s;
  return o;
}

SocketChoice socket_choose(const CostGraph& g, const SocketShape& shape, int max_pools,
                           const MachineModel& m) {
  SocketChoice c;
  const int slots = std::max(1, m.cores);
  if (shape.sockets <= 1) {
    c.candidates = candidates_predict(g, slots, max_pools, m);
    if (!c.candidates.empty())
      c.chosen = c.best_socket = static_cast<int>(candidate_choose(c.candidates));
    return c;
  }
  const int spc = std::clamp(shape.slots_per_socket, 1, slots);
  const int limit = 2 * slots;
  const int top = static_cast<int>(
      std::min<size_t>(g.ops.size(), static_cast<size_t>(std::clamp(max_pools, 1, limit))));
  std::vector<Candidate> per, span;
  std::map<int, MachineModel> on;  // sockets used -> model
  for (int p = 1; p <= top; ++p) {
    const int used = std::min(p, shape.sockets);
    if (p % used != 0) continue;
    const int k = p / used;  // pools on each socket
    if (k > spc) continue;
    auto it = on.find(used);
    if (it == on.end()) it = on.emplace(used, model_placed(m, spc, used, false)).first;
    for (int t = 1; t <= spc && k * t <= 2 * spc; ++t) {
      const double s = simulate(g, p, t, it->second);
      if (s < 0) return {};
      per.push_back({p, t, s, false});
    }
  }
  const MachineModel across = model_placed(m, spc, shape.sockets, true);
  for (int p = 1; p <= top; ++p) {
    for (int t = spc + 1; p * t <= limit; ++t) {
      const double s = simulate(g, p, t, across);
      if (s < 0) return {};
      span.push_back({p, t, s, true});
    }
  }
  c.candidates = per;
  c.candidates.insert(c.candidates.end(), span.begin(), span.end());
  if (!per.empty()) c.best_socket = static_cast<int>(candidate_choose(per));
  if (!span.empty()) c.best_span = static_cast<int>(per.size() + candidate_choose(span));
  if (c.best_socket < 0 && c.best_span < 0) return c;
  char buf[320];
  if (c.best_span < 0) {
    c.chosen = c.best_socket;
    snprintf(buf, sizeof buf, "per socket: no team larger than a socket (%d slots) to span with",
             spc);
  } else if (c.best_socket < 0) {
    c.chosen = c.best_span;
    snprintf(buf, sizeof buf, "spanning: no per-socket candidate");
  } else {
    const Candidate& a = c.candidates[static_cast<size_t>(c.best_socket)];
    const Candidate& b = c.candidates[static_cast<size_t>(c.best_span)];
    const bool spans = b.seconds <= (1 - kSpanMargin) * a.seconds;
    c.chosen = spans ? c.best_span : c.best_socket;
    const double gain = a.seconds > 0 ? 1 - b.seconds / a.seconds : 0;
    snprintf(buf, sizeof buf,
             "%s: spanning %d sockets (best %d x %d, %.4g s) predicted %s %s than per socket "
             "(best %d x %d, %.4g s); spanning needs %s",
             spans ? "spanning" : "per socket", shape.sockets, b.pools, b.threads, b.seconds,
             pct(std::fabs(gain)).c_str(), gain >= 0 ? "faster" : "slower", a.pools, a.threads,
             a.seconds, pct(kSpanMargin).c_str());
  }
  c.why = buf;
  return c;
}

}  // namespace pw::gov
