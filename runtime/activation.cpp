// runtime/activation: the plan put in force on first need, and re-planned from a
// framework's graph.
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <string>

#include "core/cache.h"
#include "core/log.h"
#include "governor/pools_blas.h"
#include "governor/pools_omp.h"
#include "governor/process_share.h"
#include "governor/setting.h"
#include "runtime/monitor.h"
#include "runtime/state.h"

namespace pw::rt {

namespace {

// Puts `now` in force: the owner calls it with the change serialized, right
// after publishing `now`. Before the process is active only the derived state is
// set (no thread exists yet to move, nothing to confine or tell).
// What threads are placed by: pools, threads per pool, core sets.
bool same_layout(const gov::Plan& a, const gov::Plan& b) {
  return a.pools == b.pools && a.threads == b.threads && a.core_sets == b.core_sets &&
         a.shared == b.shared;
}

void plan_apply(Runtime& r, const InForce* before, const InForce& now,
                std::vector<std::string>* applied) {
  const bool plan_changed = !before || !same_layout(before->plan, now.plan);
  const gov::PinMode pin = gov::pin_in_force(r.opt.pin, now.children, r.forked_child);
  const bool pin_changed =
      before && pin != gov::pin_in_force(r.opt.pin, before->children, r.forked_child);
  if (!before) {
    r.threads.reset(now.plan, pin);
  } else if (plan_changed || pin_changed)
    r.threads.replan(now.plan, pin);
  const bool team_changed = !before || before->team_worth != now.team_worth;
  if (team_changed) r.team_cap.store(now.team_worth, std::memory_order_relaxed);
  const bool cap_changed = !before || before->omp_cap != now.omp_cap;
  if (cap_changed) {
    r.omp_cap.store(now.omp_cap, std::memory_order_relaxed);
    r.omp_gen.fetch_add(1, std::memory_order_relaxed);
    if (before)
      applied->push_back(now.omp_cap > 0 ? "OpenMP cap " + std::to_string(now.omp_cap)
                                         : std::string("OpenMP not capped"));
  }
  r.generation.store(now.generation, std::memory_order_release);
  if (!before || r.state.load(std::memory_order_acquire) != kActive) return;
  if ((plan_changed || team_changed) && g_hooks.blas_follow)
    g_hooks.blas_follow(gov::blas_cap_threads(now.plan.threads, now.team_worth));
  if (plan_changed || pin_changed)
    applied->push_back(std::to_string(repin_threads(r)) +
                       (!pin_changed                 ? " threads re-pinned"
                        : pin == gov::PinMode::kPool ? " threads re-pinned to their pools' cores"
                                                     : " threads re-pinned one per core"));
  const bool budget_changed = before->budget.cpus != now.budget.cpus;
  if (budget_changed && process_confines(r)) {
    const bool was = !r.process_mask.empty();
    const int confined = process_confine(r, gov::process_mask(r.process_cpus, now.budget.cpus));
    if (confined > 0 || was != !r.process_mask.empty()) {
      process_note(r, confined);
      applied->push_back(r.process_mask.empty()
                             ? "process widened to its affinity"
                             : "process confined to " + topo::cpulist_format(r.process_mask));
    }
  }
  // The monitor judges against the budget in force and restarts its cap from
  // the one in force; a cap it changed itself it knows already.
  if (plan_changed || budget_changed) {
    // On shared cores the run queue is the neighbours' too: the process is
    // judged by the cores' worth it plans, not the region.
    const double cores = now.plan.shared && now.shared_worth > 0
                             ? now.shared_worth
                             : static_cast<double>(now.budget.cores);
    const double q = now.budget.quota_cpus;
    monitor::rebudget(q > 0 && q < cores ? q : cores, now.omp_cap);
  }
}

void activate() {
  Runtime& r = *g;
  for (const std::string& w : r.load_warnings) warn_once(w, w);
  r.load_warnings.clear();  // a forked child activating again does not repeat them
  planning::Planned p;
  std::string err;
  std::string why;
  r.process_cpus.clear();
  topo::affinity_read(&r.process_cpus, &why, getpid());
  const opt::EnvLookup env = env_lookup;
  if (!planning::plan_process(r.opt, env, r.have_machine ? &r.machine : nullptr, &p, &err)) {
    r.fail_reason = err;
    warn_once("activate", err + "; running ungoverned");
    r.state.store(kFailed, std::memory_order_release);
    return;
  }
  for (const std::string& w : p.warnings) warn_once(w, w);
  waits_note(r);
  r.machine = std::move(p.machine);
  r.have_machine = true;
  r.local_from = p.local_from;
  r.node_registry = p.node_registry;
  r.boot_dir = p.boot_dir;
  r.full_budget = p.budget;
  r.node_cpus.clear();
  r.node_worth = 0;
  r.node_team = 0;

  // OpenMP: the team cap is the plan's threads per pool, unless the user set
  // OMP_NUM_THREADS (kept unless PARWIDTH_OVERRIDE=1).
  const int threads = p.plan.threads;
  gov::SettingInput omp_in;
  omp_in.plan = threads;
  omp_in.user_set = r.omp_env_explicit;
  omp_in.governing = r.opt.mode == opt::Mode::kGovern;
  omp_in.override_user = r.opt.override_user;
  const gov::SettingDecision omp = gov::setting_decide(omp_in);
  const bool capping = omp.verdict != gov::SettingVerdict::kKeep && omp_in.governing;
  if (omp.verdict == gov::SettingVerdict::kKeep) {
    framework_note("openmp", "OMP_NUM_THREADS", r.omp_env_value, false,
                   gov::setting_verdict_text(omp.verdict));
  } else {
    framework_note("openmp", "default team size (nthreads ICV, per thread)",
                   std::to_string(threads), omp_in.governing,
                   omp.verdict == gov::SettingVerdict::kObserve ? "observe mode: nothing changed"
                   : omp.verdict == gov::SettingVerdict::kReplace
                       ? "OMP_NUM_THREADS=" + r.omp_env_value + " replaced (PARWIDTH_OVERRIDE=1)"
                       : "plan: threads per pool");
  }
  Change c;
  c.kind = Change::Kind::kActivation;
  c.cause = "activation";
  c.budget = p.budget;
  c.graph = std::move(p.graph);
  c.omp_cap = capping ? threads : 0;
  c.planned = true;
  c.plan = std::move(p.plan);
  c.calibration_found = p.calibration_found;
  plan_change(r, c);
  if (!r.thread_key_made) r.thread_key_made = pthread_key_create(&r.thread_key, thread_ended) == 0;
  // A forked child (a DataLoader worker, a multiprocessing fork) is part of its
  // parent's job: it plans inside the parent's share and does not join the
  // registry, where it would shrink its own parent.
  if (r.opt.node && r.opt.mode == opt::Mode::kGovern && r.opt.topology.empty() && r.node_registry &&
      !r.forked_child)
    node_join(r);
  const std::shared_ptr<const InForce> now = r.owner.current();
  // The whole process inside its share (before the monitor starts: it inherits it).
  r.process_mask.clear();
  if (process_confines(r))
    process_note(r, process_confine(r, gov::process_mask(r.process_cpus, now->budget.cpus)));
  if (g_exec.inside.load(std::memory_order_relaxed) && !r.forked_child)
    framework_note("process", "affinity", topo::cpulist_format(r.process_cpus), false,
                   std::string("inside its parent's share (") + kInsideShareVar +
                       "): planned inside it, not divided again, no node registry");
  if (log::log_level() >= 2) {
    log::info(2, "plan: %d pools x %d threads over %d slots", now->plan.pools, now->plan.threads,
              now->plan.slots);
    for (const std::string& n : now->plan.notes) log::info(2, "  %s", n.c_str());
  }
  r.state.store(kActive, std::memory_order_release);
  if (g_hooks.omp_activate) g_hooks.omp_activate();
  if (r.opt.monitor) {
    // PAPI's verdict is kept beside the machine for the next process of this boot.
    const std::string& dir = r.boot_dir;
    const bool keep = r.opt.papi != opt::PapiMode::kOff && !dir.empty();
    std::string verdict, unused;
    if (keep) cache::file_read_capped(dir + "/papi.txt", 4096, &verdict, &unused);
    const std::string kept = verdict;
    monitor::Setup setup{g_hooks.thread_create ? g_hooks.thread_create() : nullptr,
                         &r.threads,
                         omp_cap_change,
                         r.opt.mode == opt::Mode::kGovern,
                         r.opt.papi != opt::PapiMode::kOff,
                         process_tick,
                         keep ? &verdict : nullptr};
    const topo::Budget& b = now->budget;
    const double cpus =
        b.quota_cpus > 0 && b.quota_cpus < b.cores ? b.quota_cpus : static_cast<double>(b.cores);
    monitor::start(setup, r.opt.monitor_ms, cpus, now->omp_cap);
    if (keep && !verdict.empty() && verdict != kept)
      cache::file_write_atomic(dir, "papi.txt", verdict, &unused);
    std::string papi_why;
    if (r.opt.papi == opt::PapiMode::kOn && !monitor::papi_in_use(&papi_why))
      warn_once("papi", "PARWIDTH_PAPI=on: PAPI counters not used (" + papi_why +
                            "); the monitor watches /proc alone");
  }
}

void activate_guarded() {
  try {
    activate();
  } catch (...) {
    g->state.store(kFailed, std::memory_order_release);
    log::warn("activation failed (out of memory?); running ungoverned");
  }
}

// Activation (the topology, hwloc, the plan) needs tens of KiB of stack, and
// runs on whichever thread needs it first: a thread the host made with a
// small stack (a fork child of such a thread) would overflow it. It runs on
// a stack of its own instead. Only one activation runs at a time (the state's
// compare-and-swap), so one context pair serves.
void activate_on_own_stack() {
  constexpr size_t kStack = size_t{2} << 20;
  static ucontext_t caller, own;
  void* stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED || getcontext(&own) != 0) {
    if (stack != MAP_FAILED) munmap(stack, kStack);
    activate_guarded();
    return;
  }
  own.uc_stack.ss_sp = stack;
  own.uc_stack.ss_size = kStack;
  own.uc_link = &caller;
  makecontext(&own, activate_guarded, 0);
  if (swapcontext(&caller, &own) != 0) activate_guarded();
  munmap(stack, kStack);
}

}  // namespace

bool ensure_active() {
  if (!g) return false;
  int s = g->state.load(std::memory_order_acquire);
  if (s == kActive) return true;
  if (s != kInactive) return false;
  if (!g->state.compare_exchange_strong(s, kActivating, std::memory_order_acq_rel)) return false;
  activate_on_own_stack();
  return g->state.load(std::memory_order_acquire) == kActive;
}

bool governing() {
  return g && g->state.load(std::memory_order_acquire) == kActive &&
         g->opt.mode == opt::Mode::kGovern;
}

int omp_cap() {
  return g ? g->omp_cap.load(std::memory_order_relaxed) : 0;
}

int team_cap() {
  return g ? g->team_cap.load(std::memory_order_relaxed) : 0;
}

bool omp_count_guarded() {
  return g && g->omp_count_guarded.load(std::memory_order_relaxed);
}

void omp_count_guarded_from(const char* by) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return;
  if (g->omp_count_guarded.exchange(true, std::memory_order_relaxed)) return;
  const gov::OmpTeamResize r = gov::omp_team_resize(true, true);
  framework_note("torch", "thread count across plan changes", "kept", false,
                 std::string(r.why ? r.why : "") + " (" + (by ? by : "") + ")");
}

// The monitor's cap change (monitor::Setup::omp_cap_set), on its thread.
void omp_cap_change(int cap, const char* why) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return;
  Change c;
  c.kind = Change::Kind::kCap;
  c.cause = std::string("monitor: ") + (why ? why : "");
  c.omp_cap = cap;
  plan_change(*g, c);
}

std::shared_ptr<const InForce> plan_change(Runtime& r, const Change& c) {
  return r.owner.change(
      c,
      [&r](const InForce& next, bool* found) {
        std::vector<std::string> warnings;
        gov::Plan p = plan_on(r, next.budget, next.shared_worth, next.graph, &warnings, found);
        if (next.team_worth > 0) p = gov::plan_time_shared(std::move(p));
        // Keyed by the text: a bad calibration and a bad stored plan each warn once.
        for (const std::string& w : warnings) warn_once(w, w);
        return p;
      },
      [&r](const InForce* before, const InForce& now, std::vector<std::string>* applied) {
        plan_apply(r, before, now, applied);
      });
}

gov::Plan plan() {
  if (!g) return gov::Plan();
  const std::shared_ptr<const InForce> now = g->owner.current();
  return now ? now->plan : gov::Plan();
}

bool graph_known() {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return false;
  const std::shared_ptr<const InForce> now = g->owner.current();
  return now && now->graph.known;
}

bool graph_adopt(const planning::GraphSummary& graph) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return false;
  Change c;
  c.kind = Change::Kind::kGraph;
  c.cause = "graph: " + (graph.source.empty() ? std::string("a framework's") : graph.source);
  c.graph = graph;
  return plan_change(*g, c) != nullptr;
}

void plan_applied(unsigned generation, const std::string& what) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return;
  g->owner.applied_note(generation, what);
}

unsigned omp_generation() {
  return g ? g->omp_gen.load(std::memory_order_relaxed) : 0;
}

}  // namespace pw::rt
