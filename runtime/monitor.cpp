// runtime/monitor: sampler + detector wiring, and applying their actions.
#include "runtime/monitor.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "core/json.h"
#include "core/log.h"
#include "counters/counters.h"
#include "governor/oversub.h"
#include "runtime/fail_open.h"

namespace pw::monitor {
namespace {

struct State {
  counters::Sampler sampler;
  gov::OversubDetector detector{gov::OversubConfig{}};
  Setup setup{};
  bool started = false;
  uint64_t t0 = 0;
  std::mutex mu;  // actions
  std::vector<gov::OversubAction> actions;
  // Governed threads whose affinity the program moved off their pool: left there, listed.
  std::vector<std::pair<long, cpu_set_t>> kept;
  // The counters summed over every sample (sampler thread only; read after stop).
  counters::PapiValues totals;
  // Each thread's run + wait at the last sample and its role (sampler thread only): a
  // pool's (1), the program's own (0), not known yet (-1); whether it was seen
  // waiting for events (an event loop); whether parwidth recorded its start (a
  // thread made after activation, not the main thread).
  struct Demand {
    long tid;
    uint64_t total;
    int role;
    bool event_loop;
    bool made;
  };
  std::vector<Demand> demand_prev, demand_now;
  // Run + wait of the threads made after activation, summed until threads_ran holds.
  uint64_t made_ran_ns = 0;
  std::atomic<bool> rebudget{false};
  std::atomic<double> rebudget_cpus{0};
  std::atomic<int> rebudget_cap{0};
  // What resume_sampler starts the sampler with again.
  std::mutex life;
  counters::SamplerOptions options;
  int paused = 0;
  // The sampler thread runs: started, not paused, not stopped (oversubscribed_now).
  std::atomic<bool> sampling{false};
};

// Never destroyed: the process may exit while the sampler runs.
alignas(State) unsigned char g_storage[sizeof(State)];
State* g = nullptr;
// fixed_pools_note: outside State, as hooks may note pools before monitor::start.
std::atomic<bool> g_fixed_pools{false};
std::atomic<bool> g_event_loop{false};  // event_loop_seen
// Samples with an event loop seen until the listening sockets are looked at
// again (the sampler thread's own: a socket may be opened after its loop ran).
int g_listen_wait = 0;
constexpr int kListenRecheck = 20;
std::atomic<bool> g_threads_ran{false};  // threads_ran

// What the threads made after activation must have run (CPU or run-queue
// time, all of them together) before the process counts as running parallel
// work: a pool made at load that never worked (OpenBLAS's, made when numpy is
// imported) runs well under a millisecond.
constexpr uint64_t kThreadsRanNs = 20ull * 1000 * 1000;

bool assigned_set(const gov::ThreadRecord& r, const gov::Plan& plan, cpu_set_t* set) {
  CPU_ZERO(set);
  gov::Assignment a;
  a.pool = r.pool;
  a.cpu = r.cpu;
  std::vector<int> cpus;
  if (!r.pinned || !gov::assignment_cpus(plan, a, &cpus)) return false;
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, set);
  return CPU_COUNT(set) > 0;
}

// Governed threads whose affinity or current CPU left their pool's set: the program (a library's
// own binding, a user's taskset) put them there after we did. Returns their current masks.
std::vector<std::pair<long, cpu_set_t>> strays_of(const counters::Sample& s) {
  std::vector<std::pair<long, cpu_set_t>> out;
  const gov::Plan& plan = g->setup.threads->plan();
  for (size_t i = 0; i < s.n_thread; ++i) {
    const counters::ThreadStat& t = s.thread[i];
    if (!t.have_allowed) continue;
    gov::ThreadRecord r;
    if (!g->setup.threads->find(t.tid, &r)) continue;
    cpu_set_t want;
    if (!assigned_set(r, plan, &want)) continue;
    if (gov::thread_is_stray(t.allowed, t.cpu, want)) out.emplace_back(t.tid, t.allowed);
  }
  return out;
}

// Whose threads made the interval's demand: the pools' (thread_is_pool on
// their records) or the program's own (the main thread, threads it or its
// interpreter started, threads from before activation): its busiest own
// thread, and its event loop or else its next busiest. Own threads that ran
// are looked at every tenth sample (the detailed ones: once a second at the
// default period) for an event loop; the main thread, where a
// server's event loop usually runs, at every sample until it is found.
void roles_of(const counters::Sample& s, gov::OversubSample* o) {
  std::vector<State::Demand>& prev = g->demand_prev;
  std::vector<State::Demand>& now = g->demand_now;
  now.clear();
  const long pid = getpid();
  const double dt = static_cast<double>(s.dt_ns);
  size_t i = 0;
  for (size_t j = 0; j < s.n_thread; ++j) {
    const counters::ThreadStat& t = s.thread[j];
    State::Demand d{t.tid, t.run_ns + t.wait_ns, -1, false, false};
    while (i < prev.size() && prev[i].tid < t.tid) ++i;
    const bool seen = i < prev.size() && prev[i].tid == t.tid;
    if (seen) {
      d.role = prev[i].role;
      d.event_loop = prev[i].event_loop;
      d.made = prev[i].made;
    }
    if (d.role < 0) {
      gov::ThreadRecord rec;
      if (t.tid == pid) {
        d.role = 0;
      } else if (g->setup.threads->find(t.tid, &rec)) {
        d.role = gov::thread_is_pool(rec.creator) ? 1 : 0;
        d.made = true;
      }
    }
    const uint64_t ran = seen ? (d.total > prev[i].total ? d.total - prev[i].total : 0) : d.total;
    if (d.made && !g_threads_ran.load(std::memory_order_relaxed)) {
      g->made_ran_ns += ran;
      if (g->made_ran_ns >= kThreadsRanNs) g_threads_ran.store(true, std::memory_order_relaxed);
    }
    if (d.role != 1 && !d.event_loop && ((s.detail && ran > 0) || t.tid == pid)) {
      bool waits = false;
      if (counters::thread_waits_for_events(static_cast<pid_t>(t.tid), &waits) ==
              counters::Status::kOk &&
          waits)
        d.event_loop = true;
    }
    if (d.event_loop && !g_event_loop.load(std::memory_order_relaxed) && g_listen_wait-- <= 0) {
      bool listens = false;
      if (counters::process_listens(&listens) == counters::Status::kOk && listens)
        g_event_loop.store(true, std::memory_order_relaxed);
      else
        g_listen_wait = kListenRecheck;
    }
    const double cpus = dt > 0 ? static_cast<double>(ran) / dt : 0;
    if (d.role == 1) {
      o->pool_cpus += cpus;
    } else {
      o->own_cpus += cpus;
      const gov::OwnThread own{t.tid, cpus, t.tid == pid, d.event_loop};
      gov::OwnThread* top = o->own_top;
      if (top[0].tid == 0 || cpus > top[0].cpus) {
        if (!(top[1].event_loop && !top[0].event_loop)) top[1] = top[0];
        top[0] = own;
      } else if (own.event_loop || (!top[1].event_loop && cpus > top[1].cpus)) {
        top[1] = own;
      }
    }
    now.push_back(d);
  }
  o->have_roles = !prev.empty();
  prev.swap(now);
}

void on_sample(const counters::Sample& s, void*) {
  if (g->t0 == 0) g->t0 = s.t_ns - s.dt_ns;
  gov::OversubSample o;
  // Roles first: membership (the tick) asks whether the process's own threads have run.
  if (!rt::fail_open("monitor-roles", [&] { roles_of(s, &o); })) o.have_roles = false;
  if (g->setup.tick)
    g->setup.tick(s.t_ns - g->t0, s.dt_ns ? static_cast<double>(s.cpu_time_ns + s.runq_wait_ns) /
                                                static_cast<double>(s.dt_ns)
                                          : 0);
  if (g->rebudget.exchange(false))
    g->detector.rebudget(g->rebudget_cpus.load(), g->rebudget_cap.load());
  g->detector.fixed_pools_set(g_fixed_pools.load(std::memory_order_relaxed));
  o.t_ns = s.t_ns - g->t0;
  o.dt_ns = s.dt_ns;
  o.runq_wait_ns = s.runq_wait_ns;
  o.run_ns = s.cpu_time_ns;
  o.invol_switches = s.invol_switches;
  o.threads = s.threads;
  o.have_counters = s.papi.have_software || s.papi.have_hardware;
  if (o.have_counters) {
    counters::PapiValues& t = g->totals;
    t.have_software = t.have_software || s.papi.have_software;
    t.have_hardware = t.have_hardware || s.papi.have_hardware;
    t.context_switches += s.papi.context_switches;
    t.cpu_migrations += s.papi.cpu_migrations;
    t.task_clock_ns += s.papi.task_clock_ns;
    t.cycles += s.papi.cycles;
    t.instructions += s.papi.instructions;
    t.stall_cycles += s.papi.stall_cycles;
    t.cache_misses += s.papi.cache_misses;
  }
  o.have_hardware = s.papi.have_hardware;
  o.context_switches = s.papi.context_switches;
  o.cpu_migrations = s.papi.cpu_migrations;
  o.task_clock_ns = s.papi.task_clock_ns;
  o.cycles = s.papi.cycles;
  o.instructions = s.papi.instructions;
  o.stall_cycles = s.papi.stall_cycles;
  o.cache_misses = s.papi.cache_misses;
  std::vector<std::pair<long, cpu_set_t>> strays;
  if (s.detail) {
    rt::fail_open("monitor-strays", [&] { strays = strays_of(s); });
    o.strays = static_cast<uint32_t>(strays.size());
  }
  gov::OversubAction a[gov::kMaxActions];
  const size_t n = g->detector.step(o, a, gov::kMaxActions);
  for (size_t i = 0; i < n; ++i) {
    if (g->setup.apply) {
      switch (a[i].kind) {
        case gov::ActionKind::kLowerOmpCap:
        case gov::ActionKind::kRaiseOmpCap:
          g->setup.omp_cap_set(a[i].new_cap, a[i].text);
          break;
        default:
          break;
      }
    }
    log::info(1, "monitor: %s", a[i].text);
    std::lock_guard<std::mutex> lock(g->mu);
    if (g->actions.size() < 256) g->actions.push_back(a[i]);
    if (a[i].kind == gov::ActionKind::kAffinityKept) {
      for (auto& st : strays) {
        bool known = false;
        for (auto& k : g->kept) known = known || k.first == st.first;
        if (!known && g->kept.size() < 64) g->kept.push_back(st);
      }
    }
  }
}

// The hardware counters (cycles, instructions, ...) of a run's totals or of
// one interval, where the PMU gave them.
template <typename Counters>
void hardware_counters_write(json::Writer& w, const Counters& c) {
  if (!c.have_hardware) return;
  w.key("cycles").value(static_cast<long long>(c.cycles));
  w.key("instructions").value(static_cast<long long>(c.instructions));
  w.key("stall_cycles").value(static_cast<long long>(c.stall_cycles));
  w.key("cache_misses").value(static_cast<long long>(c.cache_misses));
}

}  // namespace

void start(const Setup& setup, int period_ms, double budget_cpus, int omp_cap) {
  if (!g) g = new (g_storage) State();
  if (g->started) return;
  gov::OversubConfig cfg;
  cfg.budget_cpus = budget_cpus > 0 ? budget_cpus : 1;
  cfg.omp_cap = omp_cap;
  g->detector.~OversubDetector();
  new (&g->detector) gov::OversubDetector(cfg);
  g->setup = setup;
  counters::SamplerOptions o;
  o.period_ms = static_cast<unsigned>(period_ms);
  o.use_papi = setup.use_papi;
  o.papi_verdict = setup.papi_verdict;
  if (g->sampler.start(o, setup.create, on_sample, nullptr) != counters::Status::kOk) {
    log::warn("cannot start the monitor thread; running without it");
    return;
  }
  // The counters are not opened again on a restart: this is no longer the
  // process's only thread.
  o.use_papi = false;
  g->options = o;
  g->started = true;
  g->sampling.store(true);
}

void fixed_pools_note() {
  g_fixed_pools.store(true, std::memory_order_relaxed);
}

bool fixed_pools_noted() {
  return g_fixed_pools.load(std::memory_order_relaxed);
}

bool event_loop_seen() {
  return g_event_loop.load(std::memory_order_relaxed);
}

bool threads_ran() {
  return g_threads_ran.load(std::memory_order_relaxed);
}

void pause_sampler() {
  if (!g || !g->started) return;
  std::lock_guard<std::mutex> lock(g->life);
  if (g->paused++ == 0) {
    g->sampling.store(false);
    g->sampler.stop();
  }
}

void resume_sampler() {
  if (!g || !g->started) return;
  std::lock_guard<std::mutex> lock(g->life);
  if (g->paused == 0 || --g->paused > 0) return;
  if (g->sampler.start(g->options, g->setup.create, on_sample, nullptr) != counters::Status::kOk) {
    log::warn("cannot restart the monitor thread; running without it");
    return;
  }
  g->sampling.store(true);
}

void rebudget(double budget_cpus, int omp_cap) {
  if (!g) return;
  g->rebudget_cpus.store(budget_cpus);
  g->rebudget_cap.store(omp_cap);
  g->rebudget.store(true);
}

void stop() {
  if (!g || !g->started) return;
  std::lock_guard<std::mutex> lock(g->life);
  g->sampling.store(false);
  g->sampler.stop();
  g->paused = 1 << 20;  // never restarted after exit began
}

void reset_after_fork() {
  if (!g) return;
  g->sampler.reset_after_fork();
  new (&g->mu) std::mutex();
  new (&g->life) std::mutex();
  g->paused = 0;
  g->sampling.store(false);
  // The sampler thread may have been inside a push_back under mu at fork():
  // fresh vectors (what the old ones hold stays behind) rather than clear().
  new (&g->actions) std::vector<gov::OversubAction>();
  g->started = false;
  g->t0 = 0;
  new (&g->kept) std::vector<std::pair<long, cpu_set_t>>();
  new (&g->demand_prev) std::vector<State::Demand>();
  g_event_loop.store(false);  // the child's threads are looked at afresh
  g_listen_wait = 0;
  g_threads_ran.store(false);  // and its own threads have not run yet
  g->made_ran_ns = 0;
  new (&g->demand_now) std::vector<State::Demand>();
  g->totals = counters::PapiValues{};
}

bool papi_in_use(std::string* why) {
  counters::SamplerInfo info;
  if (!g || !g->started) {
    if (why) *why = "monitor not started";
    return false;
  }
  g->sampler.info(&info);
  if (why) *why = info.papi_reason;
  return info.papi_used;
}

int oversubscribed_now() {
  if (!g || !g->sampling.load()) return -1;
  return g->detector.oversubscribed() ? 1 : 0;
}

std::string report_json() {
  if (!g || !g->started) return "";
  const gov::OversubSummary sum = g->detector.summary();
  counters::SamplerInfo info;
  g->sampler.info(&info);
  json::Writer w;
  w.begin_object();
  w.key("samples").value(static_cast<long long>(sum.samples));
  w.key("oversubscribed").value(sum.oversubscribed);
  w.key("max_wait_ratio").value(sum.max_wait_ratio);
  w.key("max_own_ratio").value(sum.max_own_ratio);
  w.key("contention").value(sum.contention);
  w.key("max_contention_ratio").value(sum.max_contention_ratio);
  w.key("backend").value(info.backend);
  w.key("papi").value(info.papi_reason);
  w.key("counters").begin_array();
  for (const char* c = info.counters; *c;) {
    const char* e = c;
    while (*e && *e != ' ') ++e;
    w.value(std::string(c, static_cast<size_t>(e - c)));
    c = *e ? e + 1 : e;
  }
  w.end_array();
  w.key("papi_open_ms").value(static_cast<double>(info.papi_open_ns) / 1e6);
  w.key("papi_verdict").value(info.papi_verdict);
  // The counters over the whole run (null without PAPI).
  w.key("counter_totals");
  const counters::PapiValues& t = g->totals;
  if (!info.papi_used) {
    w.null();
  } else {
    w.begin_object();
    w.key("context_switches").value(static_cast<long long>(t.context_switches));
    w.key("cpu_migrations").value(static_cast<long long>(t.cpu_migrations));
    w.key("task_clock_s").value(static_cast<double>(t.task_clock_ns) / 1e9);
    hardware_counters_write(w, t);
    w.end_object();
  }
  w.key("period_ms").value(static_cast<long long>(info.period_ms));
  // Threads' /proc files read over the run: idle threads are read rarely.
  w.key("thread_reads").value(static_cast<long long>(info.thread_reads));
  w.key("omp_cap").value(sum.omp_cap);
  std::lock_guard<std::mutex> lock(g->mu);
  // Threads the program moved off their pool after we pinned them: left where it put them.
  w.key("affinity_kept").begin_array();
  for (const auto& [tid, set] : g->kept) {
    w.begin_object();
    w.key("tid").value(static_cast<long long>(tid));
    w.key("cpus").begin_array();
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) w.value(c);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("actions").begin_array();
  for (const gov::OversubAction& a : g->actions) {
    w.begin_object();
    w.key("t").value(static_cast<double>(a.t_ns) / 1e9);
    w.key("kind").value(gov::action_kind_name(a.kind));
    w.key("wait_ratio").value(a.wait_ratio);
    w.key("own_ratio").value(a.own_ratio);
    w.key("contention_ratio").value(a.contention_ratio);
    w.key("invol_rate").value(a.invol_rate);
    w.key("demand_cpus").value(a.demand_cpus);
    w.key("children_cpus").value(a.children_cpus);
    w.key("children_waiting_cpus").value(a.children_waiting_cpus);
    w.key("old_cap").value(a.old_cap);
    w.key("new_cap").value(a.new_cap);
    w.key("strays").value(static_cast<long long>(a.strays));
    w.key("threads").value(static_cast<long long>(a.threads));
    w.key("text").value(a.text);
    // What the counters said in the interval that triggered it (null without PAPI).
    w.key("counters");
    const gov::OversubSample& c = a.counters;
    if (!c.have_counters) {
      w.null();
    } else {
      const double dt_s = c.dt_ns ? static_cast<double>(c.dt_ns) / 1e9 : 1;
      w.begin_object();
      w.key("interval_s").value(dt_s);
      w.key("context_switches").value(static_cast<long long>(c.context_switches));
      w.key("cpu_migrations").value(static_cast<long long>(c.cpu_migrations));
      w.key("task_clock_cpus").value(static_cast<double>(c.task_clock_ns) / 1e9 / dt_s);
      hardware_counters_write(w, c);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace pw::monitor
