// runtime/activation: the plan put in force on first need, and re-planned from a
// framework's graph.
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <string>

#include "core/cache.h"
#include "core/log.h"
#include "governor/process_share.h"
#include "governor/setting.h"
#include "runtime/monitor.h"
#include "runtime/state.h"

namespace pw::rt {

namespace {

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
  if (!planning::plan_process(r.opt, env, r.have_machine ? &r.planned.machine : nullptr, &p,
                              &err)) {
    r.fail_reason = err;
    warn_once("activate", err + "; running ungoverned");
    r.state.store(kFailed, std::memory_order_release);
    return;
  }
  for (const std::string& w : p.warnings) warn_once(w, w);
  r.planned = std::move(p);
  r.have_machine = true;
  r.full_budget = r.planned.budget;
  r.node_cpus.clear();
  r.node_worth = 0;
  // A forked child (a DataLoader worker, a multiprocessing fork) is part of its
  // parent's job: it plans inside the parent's share and does not join the
  // registry, where it would shrink its own parent.
  if (r.opt.node && r.opt.mode == opt::Mode::kGovern && r.opt.topology.empty() &&
      r.planned.node_registry && !r.forked_child)
    node_join(r);
  // The whole process inside its share (before the monitor starts: it inherits it).
  r.process_mask.clear();
  if (process_confines(r))
    process_note(r, process_confine(r, gov::process_mask(r.process_cpus, r.planned.budget.cpus)));
  if (g_exec.inside.load(std::memory_order_relaxed) && !r.forked_child)
    framework_note("process", "affinity", topo::cpulist_format(r.process_cpus), false,
                   std::string("inside its parent's share (") + kInsideShareVar +
                       "): planned inside it, not divided again, no node registry");
  r.threads.reset(r.planned.plan, r.opt.pin);
  if (!r.thread_key_made) r.thread_key_made = pthread_key_create(&r.thread_key, thread_ended) == 0;

  // OpenMP: the team cap is the plan's threads per pool, unless the user set
  // OMP_NUM_THREADS (kept unless PARWIDTH_OVERRIDE=1).
  const int threads = r.planned.plan.threads;
  gov::SettingInput omp_in;
  omp_in.plan = threads;
  omp_in.user_set = r.omp_env_explicit;
  omp_in.governing = r.opt.mode == opt::Mode::kGovern;
  omp_in.override_user = r.opt.override_user;
  const gov::SettingDecision omp = gov::setting_decide(omp_in);
  if (omp.verdict == gov::SettingVerdict::kKeep) {
    r.omp_cap.store(0);
    framework_note("openmp", "OMP_NUM_THREADS", r.omp_env_value, false,
                   gov::setting_verdict_text(omp.verdict));
  } else {
    r.omp_cap.store(omp_in.governing ? threads : 0);
    r.omp_capping = omp_in.governing;
    framework_note("openmp", "default team size (nthreads ICV, per thread)",
                   std::to_string(threads), omp_in.governing,
                   omp.verdict == gov::SettingVerdict::kObserve ? "observe mode: nothing changed"
                   : omp.verdict == gov::SettingVerdict::kReplace
                       ? "OMP_NUM_THREADS=" + r.omp_env_value + " replaced (PARWIDTH_OVERRIDE=1)"
                       : "plan: threads per pool");
  }
  if (log::log_level() >= 2) {
    log::info(2, "plan: %d pools x %d threads over %d slots", r.planned.plan.pools,
              r.planned.plan.threads, r.planned.plan.slots);
    for (const std::string& n : r.planned.plan.notes) log::info(2, "  %s", n.c_str());
  }
  r.state.store(kActive, std::memory_order_release);
  if (g_hooks.omp_activate) g_hooks.omp_activate();
  if (r.opt.monitor) {
    // PAPI's verdict is kept beside the machine for the next process of this boot.
    const std::string& dir = r.planned.boot_dir;
    const bool keep = r.opt.papi != opt::PapiMode::kOff && !dir.empty();
    std::string verdict, unused;
    if (keep) cache::file_read_capped(dir + "/papi.txt", 4096, &verdict, &unused);
    const std::string kept = verdict;
    monitor::Setup setup{g_hooks.thread_create ? g_hooks.thread_create() : nullptr,
                         &r.threads,
                         omp_cap_set,
                         r.opt.mode == opt::Mode::kGovern,
                         r.opt.papi != opt::PapiMode::kOff,
                         r.node_member ? node_tick : nullptr,
                         keep ? &verdict : nullptr};
    const topo::Budget& b = r.planned.budget;
    const double cpus =
        b.quota_cpus > 0 && b.quota_cpus < b.cores ? b.quota_cpus : static_cast<double>(b.cores);
    monitor::start(setup, r.opt.monitor_ms, cpus, r.omp_cap.load());
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

gov::SettingDecision setting_decide(int plan, int current, bool user_set, gov::SettingKind kind) {
  gov::SettingInput in;
  in.kind = kind;
  in.plan = plan;
  in.current = current;
  in.user_set = user_set;
  in.governing = governing();
  in.override_user = g && g->opt.override_user;
  return gov::setting_decide(in);
}

int omp_cap() {
  return g ? g->omp_cap.load(std::memory_order_relaxed) : 0;
}

void omp_cap_set(int cap) {
  if (!g) return;
  g->omp_cap.store(cap < 0 ? 0 : cap, std::memory_order_relaxed);
  g->omp_gen.fetch_add(1, std::memory_order_relaxed);
}

const gov::Plan& plan() {
  return g->threads.plan();
}

bool graph_known() {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return false;
  std::lock_guard<std::mutex> lock(g->mu);
  return g->planned.graph.known;
}

bool graph_adopt(const planning::GraphSummary& graph) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return false;
  Runtime& r = *g;
  std::vector<std::string> warnings;
  bool found = false;
  topo::Budget budget;
  topo::Machine machine;
  int worth = 0;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    budget = r.planned.budget;
    machine = r.planned.machine;
    worth = r.shared_worth;
  }
  const gov::Plan p = plan_on(r, machine, budget, worth, graph, &warnings, &found);
  // Keyed by the text: a bad calibration and a bad stored plan each warn once.
  for (const std::string& w : warnings) warn_once(w, w);
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.planned.graph = graph;
    r.planned.calibration_found = found;
    r.planned.plan = p;
  }
  r.threads.replan(p);
  if (r.omp_cap.load() > 0) omp_cap_set(p.threads);
  return true;
}
unsigned omp_generation() {
  return g ? g->omp_gen.load(std::memory_order_relaxed) : 0;
}

}  // namespace pw::rt
