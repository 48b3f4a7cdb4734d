// runtime/lifecycle: load, exit and fork — the state's birth, the report at exit, a
// forked child's reset.
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/log.h"
#include "core/report.h"
#include "runtime/fail_open.h"
#include "runtime/functions.h"
#include "runtime/monitor.h"
#include "runtime/state.h"
#include "topology/affinity.h"

namespace pw::rt {

namespace {

std::string base_name(const char* path) {
  if (!path) return "";
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

// Python processes get parwidth's startup hook (preload/python/sitecustomize.py, next
// to this library as parwidth-python/): it puts parwidth's part of
// PYTHONPATH back as it was and hooks what only Python-level code reaches
// (ONNX Runtime's sessions; the BLAS libraries that imports load). Inert
// without this library. Interpreters started with -E or -I skip it.
void python_startup_hook(const Runtime& r) {
  if (r.names.size() < 2 || r.names[1].compare(0, 6, "python") != 0) return;
  Dl_info di;
  if (!dladdr(reinterpret_cast<const void*>(&python_startup_hook), &di) || !di.dli_fname) return;
  std::string dir = di.dli_fname;
  const size_t slash = dir.rfind('/');
  dir = (slash == std::string::npos ? std::string(".") : dir.substr(0, slash)) + "/parwidth-python";
  if (access((dir + "/sitecustomize.py").c_str(), R_OK) != 0) return;
  const char* old = getenv("PYTHONPATH");
  // The hook removes exactly this first entry again.
  const std::string value = old && *old ? dir + ":" + old : dir;
  setenv("PYTHONPATH", value.c_str(), 1);
}

}  // namespace

void on_load() {
  // A secure-exec (setuid/setgid, capabilities) process is left completely alone.
  if (getauxval(AT_SECURE)) return;
  Runtime& r = *state_create();
  std::vector<std::string> warns;
  r.opt = opt::options_parse(env_lookup, &warns);
  log::log_set_level(r.opt.verbose);
  r.names.push_back(program_invocation_short_name);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    r.names.push_back(base_name(exe));
  }
  const bool selected = opt::process_selected(r.opt, r.names);
  waits_at_load(r, selected);
  if (!selected) return;
  r.pid.store(getpid(), std::memory_order_relaxed);
  // Read now: a linked-in libgomp has already read it, and later the host may change it.
  if (const char* omp = getenv("OMP_NUM_THREADS")) {
    r.omp_env_explicit = true;
    r.omp_env_value = omp;
  }
  // A program exec'ed inside a confined process's share (hooks/exec.cpp)
  // whose affinity is still that share: planned inside it, as a forked child is.
  if (const char* inside = getenv(kInsideShareVar)) {
    std::vector<int> share, affinity;
    std::string why;
    if (topo::cpulist_parse(inside, &share, &why) == topo::Status::kOk &&
        topo::affinity_read(&affinity, &why, getpid()) == topo::Status::kOk) {
      std::sort(share.begin(), share.end());
      std::sort(affinity.begin(), affinity.end());
      if (!share.empty() && share == affinity) {
        r.opt.local_rank = 0;
        r.opt.local_size = 1;
        g_exec.share.store(share);
        g_exec.affinity.store(affinity);
        g_exec.inside.store(true, std::memory_order_release);
      }
    }
  }
  r.state.store(kInactive, std::memory_order_release);
  python_startup_hook(r);
  // Said only once the process activates: a shell or `cat` under a site-wide
  // preload never does, and its stderr may be someone's $(...) capture.
  r.load_warnings = std::move(warns);
  if (log::log_level() >= 2)
    for (const std::string& d : opt::options_describe(r.opt)) log::info(2, "option %s", d.c_str());
}

void on_exit() {
  if (!selected()) return;
  // A child made with raw clone() (no fork handlers ran in it) or vfork():
  // the monitor thread, the registry entry and the report are the parent's.
  // Joining a thread that does not exist here would hang it.
  if (own_pid() != getpid()) return;
  Runtime& r = *g;
  r.exiting.store(true, std::memory_order_release);
  const int s = r.state.load(std::memory_order_acquire);
  monitor::stop();
  // Leave before the report: the others may grow back as soon as possible.
  if (r.node_member) r.node.leave();
  std::string memory_warning;
  functions::save_at_exit(&memory_warning);
  if (!memory_warning.empty()) warn_once("function-memory", memory_warning);
  report::Input in;
  in.opt = &r.opt;
  in.program = r.names.empty() ? "" : r.names.back();
  in.active = s == kActive;
  in.fail_reason = r.fail_reason;
  // What is in force at exit, as one snapshot, with the machine it was planned on.
  planning::Planned at_exit;
  const std::shared_ptr<const InForce> now = r.owner.current();
  if (s == kActive && now) {
    at_exit.machine = r.machine;
    at_exit.budget = now->budget;
    at_exit.graph = now->graph;
    at_exit.plan = now->plan;
    at_exit.calibration_found = now->calibration_found;
    in.planned = &at_exit;
    in.timeline_json = timeline_json(r);
    in.in_force_json = in_force_json(r, *now);
  }
  in.threads = r.threads.snapshot();
  if (s == kActive) {
    fail_open("report-pins", [&] { pins_as_they_stand(&in.threads); });
  }
  in.threads_ended = r.threads.ended();
  in.threads_unlisted = r.threads.ended_unlisted();
  in.originals_looked_up = g_hooks.real_lookups ? g_hooks.real_lookups() : 0;
  in.omp_cap = now ? now->omp_cap : 0;
  in.forked_child = r.forked_child;
  in.monitor_json = monitor::report_json();
  in.functions_json = functions::functions_json();
  in.function_memory_json = functions::memory_json();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    in.frameworks = r.frameworks;
    in.pools = r.pools;
    in.warnings = r.warnings;
    // Never activated: not said on stderr, but the report lists them.
    if (s != kActive && s != kFailed) in.warnings = r.load_warnings;
  }
  report::exit_write(in);
}

void exit_begins() {
  if (selected() && own_pid() == getpid()) g->exiting.store(true, std::memory_order_release);
}

void single_threaded_begin() {
  if (!selected() || own_pid() != getpid()) return;
  fail_open("monitor-pause", [] { monitor::pause_sampler(); });
}

void single_threaded_end() {
  if (!selected() || own_pid() != getpid()) return;
  fail_open("monitor-resume", [] { monitor::resume_sampler(); });
}

void on_fork_prepare() {
  if (selected()) g->mu.lock();
}
void on_fork_parent() {
  if (!selected()) return;
  g->mu.unlock();
  child_started();
}
void on_fork_child() {
  if (!selected()) return;
  Runtime& r = *g;
  r.mu.unlock();
  r.pid.store(getpid(), std::memory_order_relaxed);
  r.forked_child = true;
  monitor::reset_after_fork();
  // The registry entry is the parent's; the child plans inside the parent's
  // share of the node (if it had one) and never joins on its own.
  r.node.forget_after_fork();
  if (r.node_member && r.membership.member && !r.node_cpus.empty())
    r.opt.cpus = topo::cpulist_format(r.node_cpus);
  r.node_member = false;
  r.member_now.store(false);
  r.announced.store(false);
  r.exiting.store(false);
  r.node_cpus.clear();
  r.node_worth = 0;
  r.node_team = 0;
  // The forking thread may be a pinned pool member; the child's main thread
  // must not keep that narrowed mask (its children and sched_getaffinity
  // would inherit it): it gets the process's mask, the share when confined.
  const std::vector<int>& wide = r.process_mask.empty() ? r.process_cpus : r.process_mask;
  if (t_pool >= 0 && !wide.empty()) topo::affinity_set(0, wide);
  // Confined, the child's affinity already is the parent's share: it must not
  // divide it again by the launcher's local rank and size.
  if (!r.process_mask.empty()) {
    r.opt.local_rank = 0;
    r.opt.local_size = 1;
    g_exec.inside.store(true, std::memory_order_release);  // the share bits are the parent's
  }
  g_exec.confined.store(false, std::memory_order_release);
  r.process_mask.clear();
  t_pool = -1;
  r.frameworks.clear();
  r.pools.clear();
  r.fixed_pools.clear();
  functions::after_fork();
  r.warnings.clear();
  r.warned_keys.clear();
  r.fail_reason.clear();
  // Another thread may have held the thread table's lock at fork(): start afresh
  // rather than lock it (what the old one holds is small and stays behind).
  new (&r.threads) gov::ThreadTable();
  new (&r.repin_mu) std::mutex();  // likewise: the monitor may have held it
  // The parent's children are not ours; the monitor thread may have been
  // changing the list at fork().
  for (std::atomic<long>& f : r.forkers) f.store(0, std::memory_order_relaxed);
  new (&r.children_ticks) std::vector<std::pair<long, unsigned long long>>();
  r.children_hold = gov::ChildrenHold();
  r.children_samples = 0;
  // The child's plan in force is its own, from its activation on: the parent's
  // snapshot, timeline and the owner's locks (another thread may have held
  // them at fork()) are left behind, as the thread table's are.
  new (&r.owner) PlanOwner(monotonic_ns);
  r.omp_cap.store(0);
  r.team_cap.store(0);
  r.omp_gen.fetch_add(1);
  r.generation.store(0);
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.runtime_values.clear();
    r.runtime_values_given = false;
  }
  // Governed on its own: activates again on its first thread, reusing the machine.
  r.state.store(kInactive, std::memory_order_release);
}

}  // namespace pw::rt
