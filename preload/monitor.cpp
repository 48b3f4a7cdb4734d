// preload/monitor: sampler + detector wiring, and applying their actions.
#include "preload/monitor.h"

#include <sched.h>

#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "counters/counters.h"
#include "governor/oversub.h"
#include "preload/json.h"
#include "preload/log.h"

namespace pw::monitor {
namespace {

struct State {
  counters::Sampler sampler;
  gov::OversubDetector detector{gov::OversubConfig{}};
  Hooks hooks{};
  bool started = false;
  uint64_t t0 = 0;
  std::mutex mu;  // actions
  std::vector<gov::OversubAction> actions;
  int repinned = 0;
  std::atomic<bool> rebudget{false};
  std::atomic<double> rebudget_cpus{0};
  std::atomic<int> rebudget_cap{0};
};

// Never destroyed: the process may exit while the sampler runs.
alignas(State) unsigned char g_storage[sizeof(State)];
State* g = nullptr;

bool assigned_set(const gov::ThreadRecord& r, const gov::Plan& plan, cpu_set_t* set) {
  CPU_ZERO(set);
  if (!r.pinned) return false;
  if (r.cpu >= 0) {
    if (r.cpu >= CPU_SETSIZE) return false;
    CPU_SET(r.cpu, set);
    return true;
  }
  if (r.pool < 0 || r.pool >= static_cast<int>(plan.core_sets.size())) return false;
  for (int c : plan.core_sets[r.pool])
    if (c < CPU_SETSIZE) CPU_SET(c, set);
  return CPU_COUNT(set) > 0;
}

// Governed threads whose affinity or current CPU left their pool's set
// (something re-pinned them: a library's own binding, a user's taskset).
std::vector<std::pair<long, cpu_set_t>> strays_of(const counters::Sample& s) {
  std::vector<std::pair<long, cpu_set_t>> out;
  const gov::Plan& plan = g->hooks.registry->plan();
  for (size_t i = 0; i < s.n_thread; ++i) {
    const counters::ThreadStat& t = s.thread[i];
    if (!t.have_allowed) continue;
    gov::ThreadRecord r;
    if (!g->hooks.registry->find(t.tid, &r)) continue;
    cpu_set_t want;
    if (!assigned_set(r, plan, &want)) continue;
    if (gov::thread_is_stray(t.allowed, t.cpu, want)) out.emplace_back(t.tid, want);
  }
  return out;
}

void on_sample(const counters::Sample& s, void*) {
  if (g->t0 == 0) g->t0 = s.t_ns - s.dt_ns;
  if (g->hooks.tick)
    g->hooks.tick(s.t_ns - g->t0, s.dt_ns ? static_cast<double>(s.cpu_time_ns + s.runq_wait_ns) /
                                                static_cast<double>(s.dt_ns)
                                          : 0);
  if (g->rebudget.exchange(false))
    g->detector.rebudget(g->rebudget_cpus.load(), g->rebudget_cap.load());
  gov::OversubSample o;
  o.t_ns = s.t_ns - g->t0;
  o.dt_ns = s.dt_ns;
  o.runq_wait_ns = s.runq_wait_ns;
  o.invol_switches = s.invol_switches;
  o.threads = s.threads;
  std::vector<std::pair<long, cpu_set_t>> strays;
  if (s.detail) {
    try {
      strays = strays_of(s);
    } catch (...) {
    }
    o.strays = static_cast<uint32_t>(strays.size());
  }
  gov::OversubAction a[4];
  const size_t n = g->detector.step(o, a, 4);
  for (size_t i = 0; i < n; ++i) {
    if (g->hooks.apply) {
      switch (a[i].kind) {
        case gov::ActionKind::kLowerOmpCap:
        case gov::ActionKind::kRaiseOmpCap:
          g->hooks.set_omp_cap(a[i].new_cap);
          break;
        case gov::ActionKind::kRepinStrays:
          for (auto& [tid, set] : strays)
            if (sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) == 0) ++g->repinned;
          break;
        default:
          break;
      }
    }
    log::info(1, "monitor: %s", a[i].text);
    std::lock_guard<std::mutex> lock(g->mu);
    if (g->actions.size() < 256) g->actions.push_back(a[i]);
  }
}

}  // namespace

void monitor_start(const Hooks& h, int period_ms, double budget_cpus, int omp_cap,
                   int fixed_pools) {
  if (!g) g = new (g_storage) State();
  if (g->started) return;
  gov::OversubConfig cfg;
  cfg.budget_cpus = budget_cpus > 0 ? budget_cpus : 1;
  cfg.omp_cap = omp_cap;
  cfg.fixed_pools = fixed_pools;
  g->detector.~OversubDetector();
  new (&g->detector) gov::OversubDetector(cfg);
  g->hooks = h;
  counters::SamplerOptions o;
  o.period_ms = static_cast<unsigned>(period_ms);
  o.use_papi = h.use_papi;
  if (g->sampler.start(o, h.create, on_sample, nullptr) != counters::Status::kOk) {
    log::warn("cannot start the monitor thread; running without it");
    return;
  }
  g->started = true;
}

void monitor_rebudget(double budget_cpus, int omp_cap) {
  if (!g) return;
  g->rebudget_cpus.store(budget_cpus);
  g->rebudget_cap.store(omp_cap);
  g->rebudget.store(true);
}

void monitor_stop() {
  if (g && g->started) g->sampler.stop();
}

void monitor_after_fork() {
  if (!g) return;
  g->sampler.reset_after_fork();
  new (&g->mu) std::mutex();
  g->actions.clear();
  g->started = false;
  g->t0 = 0;
  g->repinned = 0;
}

bool monitor_running() {
  counters::SamplerInfo info;
  return g && g->started && g->sampler.info(&info) != counters::Status::kUnsupported &&
         info.running;
}

std::string monitor_json() {
  if (!g || !g->started) return "";
  const gov::OversubSummary sum = g->detector.summary();
  counters::SamplerInfo info;
  g->sampler.info(&info);
  json::Writer w;
  w.begin_object();
  w.key("samples").value(static_cast<long long>(sum.samples));
  w.key("oversubscribed").value(sum.oversubscribed);
  w.key("max_wait_ratio").value(sum.max_wait_ratio);
  w.key("backend").value(info.backend);
  w.key("papi").value(info.papi_reason);
  w.key("period_ms").value(static_cast<long long>(info.period_ms));
  w.key("omp_cap").value(sum.omp_cap);
  w.key("repinned").value(g->repinned);
  w.key("actions").begin_array();
  std::lock_guard<std::mutex> lock(g->mu);
  for (const gov::OversubAction& a : g->actions) {
    w.begin_object();
    w.key("t").value(static_cast<double>(a.t_ns) / 1e9);
    w.key("kind").value(gov::action_kind_name(a.kind));
    w.key("wait_ratio").value(a.wait_ratio);
    w.key("invol_rate").value(a.invol_rate);
    w.key("demand_cpus").value(a.demand_cpus);
    w.key("old_cap").value(a.old_cap);
    w.key("new_cap").value(a.new_cap);
    w.key("strays").value(static_cast<long long>(a.strays));
    w.key("threads").value(static_cast<long long>(a.threads));
    w.key("text").value(a.text);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace pw::monitor
