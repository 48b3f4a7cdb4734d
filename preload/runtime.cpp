// preload/runtime: activation, the state the hooks read, the report at exit.
#include "preload/runtime.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "governor/membership.h"
#include "governor/node_share.h"
#include "governor/process_share.h"
#include "governor/setting.h"
#include "preload/cache.h"
#include "preload/functions.h"
#include "preload/log.h"
#include "preload/monitor.h"
#include "preload/node.h"
#include "preload/planning.h"
#include "preload/report.h"

namespace pw::rt {
namespace {

enum State : int { kUnselected, kInactive, kActivating, kActive, kFailed };

struct FrameworkNote {
  std::string name, setting, value, why;
  bool applied;
};

// Never destroyed: threads may still run hooks while the process exits.
struct Runtime {
  opt::Options opt;
  std::vector<std::string> names;  // program names for include/exclude
  bool omp_env_explicit = false;
  std::string omp_env_value;
  std::atomic<int> state{kUnselected};
  std::atomic<pid_t> pid{0};
  bool have_machine = false;
  planning::Planned planned;
  std::string fail_reason;
  gov::ThreadRegistry registry;
  // Held while pinned threads move to a new plan: the monitor's repin_threads
  // against a thread that starts meanwhile and catches up (thread_catch_up).
  std::mutex repin_mu;
  std::vector<int> process_cpus;
  // The mask of the process's unpinned threads (the main thread, helpers)
  // while its share is smaller than process_cpus; empty = not confined.
  std::vector<int> process_mask;
  std::atomic<int> omp_cap{0};
  std::atomic<unsigned> omp_gen{1};
  bool forked_child = false;
  std::mutex mu;  // frameworks, warnings
  std::vector<FrameworkNote> frameworks;
  std::vector<PoolNote> pools;
  std::vector<std::string> warnings;
  std::vector<std::string> warned_keys;
  std::vector<std::string> load_warnings;  // bad option values, said at activation
  // The node registry (preload/node.h): the budget before the node is divided,
  // and the share in force. Written at activation and by the monitor thread.
  topo::Budget full_budget;
  node::Registry node;
  bool node_member = false;             // the registry is in use (its directory checked)
  gov::MembershipState membership;      // whether we are in it now (monitor thread)
  std::atomic<bool> member_now{false};  // membership.member, for other threads
  // A framework is creating pools it cannot resize (fixed_pools_prepare): the
  // monitor thread joins at its next sample.
  std::atomic<bool> announced{false};
  std::atomic<bool> launcher{false};  // it spawned ranks that a launcher describes
  std::vector<int> node_cpus;
  int node_changes = 0;
  unsigned child_checks = 0;     // membership ticks, for a look at its children every fifth
  uint64_t node_refresh_ns = 0;  // when our entry was last rewritten (monitor time)
  // Monitor samples seen as a member, and the members the last scan listed,
  // each with the last sample that listed it: a re-division says how many
  // samples after a member's last listing it came.
  uint64_t node_samples = 0;
  std::vector<std::pair<long, uint64_t>> node_listed;
  bool omp_capping = false;  // the team cap is ours (not the user's OMP_NUM_THREADS)
  // Each governed thread's tid, under a key whose destructor retires its record.
  pthread_key_t thread_key{};
  bool thread_key_made = false;
};

Runtime* g = nullptr;
HookEntries g_hooks{};  // registered by hooks/ at load
alignas(Runtime) unsigned char g_storage[sizeof(Runtime)];

// A CPU set that an exec hook reads without a lock (possibly in a vfork
// child) while the monitor thread rewrites it at a re-division: a torn read
// hands one exec a mix of two shares, never memory that is gone.
struct CpuBits {
  static constexpr int kWords = CPU_SETSIZE / 64;
  std::atomic<uint64_t> w[kWords] = {};
  void store(const std::vector<int>& cpus) {
    uint64_t v[kWords] = {};
    for (int c : cpus)
      if (c >= 0 && c < CPU_SETSIZE) v[c / 64] |= uint64_t{1} << (c % 64);
    for (int i = 0; i < kWords; ++i) w[i].store(v[i], std::memory_order_relaxed);
  }
  void clear() {
    for (auto& x : w) x.store(0, std::memory_order_relaxed);
  }
  bool load(cpu_set_t* out) const {
    CPU_ZERO(out);
    bool any = false;
    for (int i = 0; i < kWords; ++i) {
      const uint64_t v = w[i].load(std::memory_order_relaxed);
      for (int b = 0; b < 64; ++b)
        if (v >> b & 1) {
          CPU_SET(i * 64 + b, out);
          any = true;
        }
    }
    return any;
  }
};

// What programs exec'ed by this process start inside (gov::exec_share).
struct ExecState {
  std::atomic<bool> confined{false};  // narrowed to its share by us
  std::atomic<bool> inside{false};    // inside another process's share
  CpuBits share;                      // the share (confined or inside)
  CpuBits affinity;                   // the affinity the process was given
};
ExecState g_exec;

thread_local int t_pool __attribute__((tls_model("initial-exec"))) = -1;

const char* env_lookup(const char* name) {
  return getenv(name);
}

std::string base_name(const char* path) {
  if (!path) return "";
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

// A governed thread exited: its pin is checked while it still runs here (a
// thread-specific destructor runs on the exiting thread; hooks/pthread.cpp's
// own check may come after this one), then its record leaves the live ones.
void thread_ended(void* tid) {
  if (!g || g->pid.load(std::memory_order_relaxed) != getpid()) return;
  try {
    own_pin_check();
    g->registry.retire(reinterpret_cast<long>(tid));
  } catch (...) {
  }
}

// ---- node registry ---------------------------------------------------------------------------

std::vector<gov::NodeCore> node_cores_of(const topo::Budget& b) {
  std::vector<gov::NodeCore> v;
  for (const topo::Socket& s : b.sockets)
    for (const topo::Core& c : s.cores)
      if (!c.pus.empty()) v.push_back({s.os_index, c.pus[0]});
  return v;
}

// The budget cut down to the cores (first PUs) in `keep`.
topo::Budget budget_narrow(const topo::Budget& full, std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  topo::Budget b;
  b.quota_cpus = full.quota_cpus;
  b.notes = full.notes;
  for (const topo::Socket& s : full.sockets) {
    topo::Socket out;
    out.os_index = s.os_index;
    for (const topo::Core& c : s.cores) {
      if (c.pus.empty() || !std::binary_search(keep.begin(), keep.end(), c.pus[0])) continue;
      topo::Core core = c;
      core.socket = static_cast<int>(b.sockets.size());
      b.cpus.insert(b.cpus.end(), c.pus.begin(), c.pus.end());
      out.cores.push_back(std::move(core));
    }
    if (!out.cores.empty()) b.sockets.push_back(std::move(out));
  }
  std::sort(b.cpus.begin(), b.cpus.end());
  for (const topo::Socket& s : b.sockets) b.cores += static_cast<int>(s.cores.size());
  return b;
}

gov::Plan plan_for_budget(const Runtime& r, const topo::Budget& b) {
  std::vector<std::string> warnings;
  bool found = false;
  // Warnings about the calibration were given at activation.
  return planning::plan_with_cache(r.opt, env_lookup, r.planned.machine, b, r.planned.graph,
                                   &warnings, &found);
}

bool thread_affinity_set(long tid, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return CPU_COUNT(&set) > 0 && sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) == 0;
}

bool thread_affinity(long tid, std::vector<int>* out) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(static_cast<pid_t>(tid), sizeof set, &set) != 0) return false;
  out->clear();
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out->push_back(c);
  return true;
}

// Moves the threads that follow `from` to `to`, but not those in `skip`
// (sorted); returns how many moved.
int process_move(const std::vector<int>& from, const std::vector<int>& to,
                 const std::vector<long>& skip) {
  DIR* d = opendir("/proc/self/task");
  if (!d) {
    // No /proc: at least the calling thread (at activation, the one that
    // creates the others, so they inherit it).
    std::vector<int> now;
    return thread_affinity(0, &now) && gov::thread_follows(now, from) && thread_affinity_set(0, to)
               ? 1
               : 0;
  }
  int moved = 0;
  std::vector<int> now;
  while (struct dirent* e = readdir(d)) {
    char* end = nullptr;
    const long tid = strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || tid <= 0) continue;
    if (std::binary_search(skip.begin(), skip.end(), tid)) continue;
    if (thread_affinity(tid, &now) && gov::thread_follows(now, from) &&
        thread_affinity_set(tid, to))
      ++moved;
  }
  closedir(d);
  return moved;
}

// Publishes the process's mask for the exec hooks.
void exec_state_update(const Runtime& r) {
  if (!r.process_mask.empty()) {
    g_exec.affinity.store(r.process_cpus);
    g_exec.share.store(r.process_mask);
    g_exec.confined.store(true, std::memory_order_release);
  } else {
    g_exec.confined.store(false, std::memory_order_release);
    if (!g_exec.inside.load(std::memory_order_relaxed)) g_exec.share.clear();
  }
}

// Puts the whole process inside `mask` (empty: back to its affinity at
// activation): every thread whose mask is not narrower than the process's
// current one, the main thread and the monitor included. The threads parwidth
// pinned are left to the plan (repin_threads): on a share of one core their
// mask is the process's, and they must not be widened with it. Returns the
// threads moved.
//
// The exec hooks read the published state on whichever thread execs: it is
// published before any thread is narrowed and, growing back, after every
// thread is widened, so that a thread that sees its narrowed mask also sees
// that the process is confined (else a new image would plan from its share).
int process_confine(Runtime& r, const std::vector<int>& mask) {
  const std::vector<int> from = r.process_mask.empty() ? r.process_cpus : r.process_mask;
  const std::vector<int>& to = mask.empty() ? r.process_cpus : mask;
  if (to.empty() || to == from) return 0;
  r.process_mask = mask;
  if (!mask.empty()) exec_state_update(r);
  std::vector<long> pinned;
  for (const gov::ThreadRecord& t : r.registry.live())
    if (t.pinned) pinned.push_back(t.tid);
  std::sort(pinned.begin(), pinned.end());
  const int moved = process_move(from, to, pinned);
  if (mask.empty()) exec_state_update(r);
  return moved;
}

// Whether the process is confined, in the report's words.
void process_note(Runtime& r, int moved) {
  if (r.process_mask.empty()) {
    framework_note("process", "affinity", topo::cpulist_format(r.process_cpus), moved > 0,
                   moved > 0 ? "the share is the whole affinity again; " + std::to_string(moved) +
                                   " threads widened back"
                             : "the share is the whole affinity: not narrowed");
    return;
  }
  framework_note("process", "affinity", topo::cpulist_format(r.process_mask), true,
                 "the share (" + topo::cpulist_format(r.planned.budget.cpus) +
                     ") is smaller than the affinity (" + topo::cpulist_format(r.process_cpus) +
                     "): " + std::to_string(moved) +
                     " unpinned threads (the main thread among them) confined to it, as "
                     "numactl or Slurm's binding would; children inherit it");
}

// Whether the process's unpinned threads are confined in this configuration.
bool process_confines(const Runtime& r) {
  return r.opt.mode == opt::Mode::kGovern && r.opt.topology.empty() &&
         r.opt.pin != opt::Pin::kNone && !r.process_cpus.empty();
}

// Moves the threads we pinned onto the plan in force (the registry's): pool
// p -> p mod pools, each pool's next core
// in creation order (pool 0 from its second core, as for new threads: the main
// thread works in pool 0). Threads that exited are skipped; threads pinned by
// their creator are not ours to move. A thread that took its core from the old plan but is
// recorded only after this has read the records moves itself (thread_catch_up).
// Moves one pinned thread (its record *t; `tid` 0 for the calling thread) to
// the plan in force, its core from the plan's own hand-out (the registry's
// counters, so that threads created later take the cores that come next), and
// updates its record. Called with repin_mu held.
bool thread_move_to_plan(Runtime& r, gov::ThreadRecord* t, long tid) {
  const gov::Assignment a = r.registry.reassign(t->pool >= 0 ? t->pool : 0);
  std::vector<int> cpus;
  if (!cpus_for(a, &cpus) || !thread_affinity_set(tid, cpus)) return false;
  t->pool = a.pool;
  t->cpu = a.cpu;
  t->generation = a.generation;
  r.registry.update(*t);
  return true;
}

int repin_threads(Runtime& r) {
  if (r.opt.pin == opt::Pin::kNone) return 0;
  std::lock_guard<std::mutex> lock(r.repin_mu);
  int moved = 0;
  for (gov::ThreadRecord t : r.registry.live())
    if (t.pinned && thread_move_to_plan(r, &t, t.tid)) ++moved;
  return moved;
}

// Puts a node share in force. At activation only the budget and plan change
// (no thread exists yet); later the running process shrinks or grows: new
// plan for new threads, OpenMP cap, existing threads re-pinned, the unpinned
// ones (the main thread) confined, monitor budget. The main thread's mask is
// what the program sees of its share (sched_getaffinity): it changes last, so
// that the rest is in force by the time the program can see it, however long
// this thread is kept off a CPU meanwhile (a loaded node).
void node_apply(Runtime& r, const gov::NodeShare& share, bool at_activation,
                const std::string& when = std::string()) {
  if (share.cpus.empty() || share.cpus == r.node_cpus) return;
  r.node_cpus = share.cpus;
  topo::Budget b = budget_narrow(r.full_budget, share.cpus);
  b.local_rank = share.rank;
  b.local_size = share.size;
  b.notes.push_back(share.note + " (" + r.node.dir() + ")");
  // Cores shared by more members than cores: planned on the cores' worth this
  // process keeps busy, its threads spread over the whole region.
  const gov::Plan p =
      share.overlap && share.cores_worth < static_cast<int>(share.cpus.size())
          ? gov::plan_shared(
                plan_for_budget(
                    r, budget_narrow(r.full_budget,
                                     std::vector<int>(share.cpus.begin(),
                                                      share.cpus.begin() + share.cores_worth))),
                share.cpus)
          : plan_for_budget(r, b);
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.planned.budget = b;
    r.planned.plan = p;
  }
  if (at_activation) return;
  r.registry.replan(p);
  if (r.omp_capping) omp_cap_set(p.threads);
  if (g_hooks.blas_follow) g_hooks.blas_follow(p.threads);
  const int moved = repin_threads(r);
  if (process_confines(r)) {
    const bool was = !r.process_mask.empty();
    const int confined = process_confine(r, gov::process_mask(r.process_cpus, b.cpus));
    if (confined > 0 || was != !r.process_mask.empty()) process_note(r, confined);
  }
  // On shared cores the run queue is the neighbours' too: the monitor judges
  // this process by the cores' worth it plans, not the region.
  const double cores = p.shared ? share.cores_worth : static_cast<double>(b.cores);
  const double cpus = b.quota_cpus > 0 && b.quota_cpus < cores ? b.quota_cpus : cores;
  monitor::rebudget(cpus, r.omp_capping ? p.threads : 0);
  const std::string list = topo::cpulist_format(b.cpus);
  log::info(1, "node: %s: now %d cores (%s), %d threads re-pinned", share.note.c_str(), b.cores,
            list.c_str(), moved);
  if (++r.node_changes <= 32)
    framework_note("node", "cores", list, true,
                   share.note + "; " + std::to_string(moved) + " threads re-pinned, " +
                       (r.omp_capping ? "OpenMP cap " + std::to_string(p.threads)
                                      : std::string("OpenMP not capped")) +
                       when);
}

// Rewrites our entry when what `parwidth node` shows of us changed: the plan
// in force, the monitor's verdict (on the sampler thread, or before it runs).
void node_entry_refresh(Runtime& r, uint64_t t_ns) {
  if (!r.node.published()) return;
  gov::NodeMember self = r.node.self();
  const gov::Plan& p = r.registry.plan();
  const int pools = static_cast<int>(p.core_sets.size());
  const int verdict = monitor::oversubscribed_now();
  const bool plan_same = self.pools == pools && self.intra == p.threads;
  if (plan_same && self.oversubscribed == verdict) return;
  // A verdict that flips sample by sample on a loaded machine is rewritten
  // at most once a second: each rewrite is a file the others must re-read.
  if (plan_same && r.node_refresh_ns && t_ns - r.node_refresh_ns < 1000000000ull) return;
  r.node_refresh_ns = t_ns;
  self.pools = pools;
  self.intra = p.threads;
  self.oversubscribed = verdict;
  std::string err;
  r.node.publish(self, &err);  // failing, the entry in place stays right about the cores
}

// Publishes this process in the registry and takes its share.
bool node_publish(Runtime& r, bool at_activation) {
  std::string err;
  gov::NodeMember self;
  self.pid = getpid();
  node::proc_start_time(self.pid, &self.start);
  self.cores = node_cores_of(r.full_budget);
  self.joined = static_cast<long long>(time(nullptr));
  self.oversubscribed = monitor::oversubscribed_now();
  if (!r.node.publish(self, &err)) {
    warn_once("node", "node registry: " + err +
                          "; this process's share of the node is not "
                          "divided with other governed processes");
    return false;
  }
  node::ScanResult s;
  if (r.node.scan(&s)) node_apply(r, gov::node_share(s.members, s.self), at_activation);
  node_entry_refresh(r, 0);
  return true;
}

// Opens the registry. With the monitor, the process joins when its parallel
// work runs (node_tick); without it, now, for the process's life.
void node_join(Runtime& r) {
  // The default directory may be squatted by another user (a directory or a
  // symlink of theirs): the user's runtime directory next, and only then no
  // registry (one warning).
  std::string errors;
  bool opened = false;
  for (const std::string& dir : node::candidate_dirs(r.opt.node_dir)) {
    std::string err;
    if (r.node.open(dir, &err)) {
      if (!errors.empty())
        framework_note("node", "registry", dir, true, "the default was unusable: " + errors);
      opened = true;
      break;
    }
    errors += (errors.empty() ? "" : "; ") + err;
  }
  if (!opened) {
    warn_once("node", "node registry: " + errors +
                          "; this process's share of the node is not "
                          "divided with other governed processes");
    return;
  }
  r.node_member = true;
  r.membership = gov::MembershipState();
  // Not a member yet: the whole budget is in force (a join that leaves it so changes nothing).
  for (const gov::NodeCore& core : node_cores_of(r.full_budget)) r.node_cpus.push_back(core.cpu);
  if (!r.opt.monitor && node_publish(r, true)) r.membership.member = true;
}

void membership_note(Runtime& r, const char* what, const char* why, uint64_t t_ns) {
  char when[64];
  snprintf(when, sizeof when, "%.2f s after the first sample", static_cast<double>(t_ns) / 1e9);
  if (++r.node_changes <= 32)
    framework_note("membership", "node registry", what, true, std::string(why) + "; " + when);
  log::info(1, "node: %s (%s)", what, why);
}

// Whether an environment (NAME=value strings, null-terminated) is a rank's that
// a launcher describes: a local rank and size from PARWIDTH_LOCAL_* or a
// launcher's variables (planning::local_share's reading).
bool env_names_a_rank(char* const envp[]) {
  const opt::EnvLookup lookup = [envp](const char* name) -> const char* {
    const size_t n = strlen(name);
    for (char* const* e = envp; *e; ++e)
      if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return nullptr;
  };
  opt::Options none;
  int rank = 0, size = 1;
  std::string from;
  planning::local_share(none, lookup, &rank, &size, &from);
  return from != "none";
}

// Whether a child process of ours runs as a rank that a launcher describes (and
// ours does not, or this process would not be in the registry): this process is
// a launcher (torchrun's agent, a script that starts ranks), whose ranks divide
// the node themselves, so it never counts. Children started by fork and exec
// are found here; posix_spawn's are seen at the call (spawn_cpus). Reads
// /proc/self/task/*/children and each child's /proc/<pid>/environ, on the
// monitor thread; false when they cannot be read.
bool children_are_ranks() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return false;
  bool found = false;
  std::string list, env, unused;
  // Children belong to the thread that forked them; launchers fork from a few
  // threads, and a process of thousands of threads is not read whole each time.
  int looked = 0;
  while (!found && looked < 256) {
    struct dirent* t = readdir(tasks);
    if (!t) break;
    if (t->d_name[0] == '.') continue;
    ++looked;
    if (!cache::file_read_capped(std::string("/proc/self/task/") + t->d_name + "/children", 65536,
                                 &list, &unused))
      continue;
    for (size_t at = 0; at < list.size() && !found;) {
      const size_t end = std::min(list.find(' ', at), list.size());
      const std::string pid = list.substr(at, end - at);
      at = end + 1;
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (!cache::file_read_capped("/proc/" + pid + "/environ", 1u << 20, &env, &unused)) continue;
      std::vector<char*> envp;  // environ's NUL-separated strings, as an envp
      for (size_t i = 0; i < env.size(); i += strlen(&env[i]) + 1) envp.push_back(&env[i]);
      envp.push_back(nullptr);
      found = env_names_a_rank(envp.data());
    }
  }
  closedir(tasks);
  return found;
}

// Records which members this sample's scan lists; returns, for the report,
// "; at member sample N" and each member gone since the last scan with the
// last sample that listed it.
std::string node_listing_change(Runtime& r, const std::vector<gov::NodeMember>& members,
                                uint64_t sample) {
  std::string gone;
  for (const auto& [pid, last] : r.node_listed) {
    bool listed = false;
    for (const gov::NodeMember& m : members) listed = listed || m.pid == pid;
    if (!listed)
      gone += (gone.empty() ? "" : ", ") + std::to_string(pid) + " last listed at sample " +
              std::to_string(last);
  }
  r.node_listed.clear();
  for (const gov::NodeMember& m : members) r.node_listed.emplace_back(m.pid, sample);
  return "; at member sample " + std::to_string(sample) +
         (gone.empty() ? std::string() : "; gone: " + gone);
}

// On the monitor thread, every sample: join or leave by demand, and follow
// members that arrived or left.
void node_tick(uint64_t t_ns, double busy_cpus) {
  Runtime* r = g;
  if (!r || !r->node_member || r->state.load(std::memory_order_acquire) != kActive) return;
  try {
    gov::MembershipInput in;
    in.t_ns = t_ns;
    in.busy_cpus = busy_cpus;
    in.parallel = r->registry.any();  // a pool thread exists (or existed)
    in.launcher = r->launcher.load(std::memory_order_relaxed);
    in.announced = r->announced.exchange(false, std::memory_order_acq_rel);
    gov::MembershipConfig c;
    c.idle_leave_ns = static_cast<uint64_t>(r->opt.node_idle_ms) * 1000000ull;
    // Before joining, and every fifth sample: has it become a launcher? (Also while it is
    // not a member: a launcher idle while its ranks run must not join once they are gone.)
    const bool would_join = !r->membership.member && in.parallel && busy_cpus >= c.busy_cpus;
    if (!in.launcher && (would_join || ++r->child_checks % 5 == 0) && children_are_ranks()) {
      r->launcher.store(true, std::memory_order_relaxed);
      in.launcher = true;
    }
    const bool was = r->membership.member;
    const gov::MembershipStep step = gov::membership_step(&r->membership, in, c);
    if (step.change == gov::MembershipChange::kJoin) {
      if (node_publish(*r, false)) {
        r->member_now.store(true, std::memory_order_release);
        membership_note(*r, "joined", step.why, t_ns);
      } else {
        r->membership.member = false;
        r->node_member = false;  // warned once; keep the whole budget
      }
      return;
    }
    if (step.change == gov::MembershipChange::kLeave) {
      r->member_now.store(false, std::memory_order_release);
      r->node.leave();
      gov::NodeShare all;
      for (const gov::NodeCore& core : node_cores_of(r->full_budget)) all.cpus.push_back(core.cpu);
      all.note = std::string("node registry: left (") + step.why + "), every core again";
      node_apply(*r, all, false);
      membership_note(*r, "left", step.why, t_ns);
      return;
    }
    if (!was) {
      r->node_listed.clear();
      return;
    }
    const uint64_t sample = ++r->node_samples;
    node::ScanResult s;
    if (r->node.scan(&s))
      node_apply(*r, gov::node_share(s.members, s.self), false,
                 node_listing_change(*r, s.members, sample));
    node_entry_refresh(*r, t_ns);
  } catch (...) {
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
  gov::PinMode pin = r.opt.pin == opt::Pin::kNone   ? gov::PinMode::kNone
                     : r.opt.pin == opt::Pin::kPool ? gov::PinMode::kPool
                                                    : gov::PinMode::kCore;
  r.registry.reset(r.planned.plan, pin);
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
    const bool keep = r.opt.papi != opt::Papi::kOff && !dir.empty();
    std::string verdict, unused;
    if (keep) cache::file_read_capped(dir + "/papi.txt", 4096, &verdict, &unused);
    const std::string kept = verdict;
    monitor::Hooks h{g_hooks.thread_create ? g_hooks.thread_create() : nullptr,
                     &r.registry,
                     omp_cap_set,
                     r.opt.mode == opt::Mode::kGovern,
                     r.opt.papi != opt::Papi::kOff,
                     r.node_member ? node_tick : nullptr,
                     keep ? &verdict : nullptr};
    const topo::Budget& b = r.planned.budget;
    const double cpus =
        b.quota_cpus > 0 && b.quota_cpus < b.cores ? b.quota_cpus : static_cast<double>(b.cores);
    monitor::start(h, r.opt.monitor_ms, cpus, r.omp_cap.load());
    if (keep && !verdict.empty() && verdict != kept)
      cache::file_write_atomic(dir, "papi.txt", verdict, &unused);
    std::string papi_why;
    if (r.opt.papi == opt::Papi::kOn && !monitor::papi_in_use(&papi_why))
      warn_once("papi", "PARWIDTH_PAPI=on: PAPI counters not used (" + papi_why +
                            "); the monitor watches /proc alone");
  }
}

// The report states only pins the kernel still shows. A thread parwidth
// pinned may have been moved since: an OpenMP runtime whose own binding could
// not be turned off in time binds the threads that run its regions, or the
// program set an affinity itself. Checked when a pinned thread exits
// (own_pin_check) and, for the threads still alive, at the report. A moved
// thread is reported as not pinned, with where it runs. True if `t` changed.
bool pin_moved(gov::ThreadRecord* t, const std::vector<int>& now) {
  std::vector<int> want;
  gov::Assignment a;
  a.pool = t->pool;
  a.cpu = t->cpu;
  if (!t->pinned || now.empty() || !cpus_for(a, &want)) return false;
  std::sort(want.begin(), want.end());
  if (now == want) return false;
  t->pinned = false;
  t->pin_error = "pinned to " + topo::cpulist_format(want) + ", then moved to " +
                 topo::cpulist_format(now) + " (by its OpenMP runtime's binding or the program)";
  return true;
}

// The live threads among the records (in /proc/self/task; the last record of
// a tid), as they stand now. Exited threads were checked as they exited.
void pins_as_they_stand(std::vector<gov::ThreadRecord>* threads) {
  std::vector<std::pair<long, size_t>> last;  // tid -> index of its last record
  last.reserve(threads->size());
  for (size_t i = 0; i < threads->size(); ++i) last.emplace_back((*threads)[i].tid, i);
  std::stable_sort(last.begin(), last.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> now;
  for (size_t k = 0; k < last.size(); ++k) {
    if (k + 1 < last.size() && last[k + 1].first == last[k].first) continue;
    gov::ThreadRecord& t = (*threads)[last[k].second];
    if (!t.pinned || t.tid <= 0) continue;
    char path[48];
    snprintf(path, sizeof path, "/proc/self/task/%ld", t.tid);
    if (access(path, F_OK) != 0 || !thread_affinity(t.tid, &now)) continue;
    pin_moved(&t, now);
  }
}

}  // namespace

bool selected() {
  return g && g->state.load(std::memory_order_relaxed) != kUnselected;
}
const opt::Options& options() {
  return g->opt;
}

namespace {

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

int current_pool() {
  return t_pool;
}
void current_pool_set(int pool) {
  t_pool = pool;
}

gov::Assignment thread_assign(int creator_pool) {
  return g->registry.assign(creator_pool);
}
void thread_record(const gov::ThreadRecord& r) {
  g->registry.record(r);
  // Told when the thread exits (returns, pthread_exit, cancellation).
  if (g->thread_key_made) pthread_setspecific(g->thread_key, reinterpret_cast<void*>(r.tid));
}

bool thread_catch_up(long tid, unsigned generation) {
  // The common case, no plan since the thread took its core: one atomic load.
  if (!g || g->registry.generation() == generation) return false;
  Runtime& r = *g;
  try {
    // Recorded before repin_threads read the records, the thread was moved
    // there (its record has the new generation); recorded after, it was not
    // seen and moves itself now. The lock orders the two.
    std::lock_guard<std::mutex> lock(r.repin_mu);
    gov::ThreadRecord t;
    if (!r.registry.find(tid, &t) || !t.pinned || t.generation == r.registry.generation() ||
        !thread_move_to_plan(r, &t, 0))
      return false;
    t_pool = t.pool;
    return true;
  } catch (...) {
    return false;
  }
}
opt::Pin pin_mode() {
  return g->opt.pin;
}

void own_pin_check() {
  if (!g || g->state.load(std::memory_order_acquire) != kActive || own_pid() != getpid()) return;
  gov::ThreadRecord t;
  std::vector<int> now;
  if (!g->registry.find(static_cast<long>(gettid()), &t) || !t.pinned || !thread_affinity(0, &now))
    return;
  if (pin_moved(&t, now)) g->registry.update(t);
}

bool cpus_for(const gov::Assignment& a, std::vector<int>* cpus) {
  if (a.pool < 0 || g->opt.pin == opt::Pin::kNone) return false;
  if (a.cpu >= 0) {
    cpus->assign(1, a.cpu);
    return true;
  }
  // The registry's plan: immutable once published (the node registry and
  // graph_adopt replace it while threads are being created).
  const auto& sets = g->registry.plan().core_sets;
  if (a.pool >= static_cast<int>(sets.size()) || sets[a.pool].empty()) return false;
  *cpus = sets[a.pool];
  return true;
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
  return g->registry.plan();
}

bool graph_known() {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return false;
  std::lock_guard<std::mutex> lock(g->mu);
  return g->planned.graph.known;
}

bool graph_adopt(const std::string& source, long heavy, long layers, long avg_width,
                 long max_level_width, double weighted_parallelism) {
  planning::GraphSummary g;
  g.known = true;
  g.source = source;
  g.heavy = heavy;
  g.layers = layers;
  g.avg_width = avg_width;
  g.max_level_width = max_level_width;
  g.weighted_parallelism = weighted_parallelism;
  return graph_adopt(g);
}

bool graph_adopt(const planning::GraphSummary& graph) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return false;
  Runtime& r = *g;
  std::vector<std::string> warnings;
  bool found = false;
  topo::Budget budget;
  topo::Machine machine;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    budget = r.planned.budget;
    machine = r.planned.machine;
  }
  const gov::Plan p =
      planning::plan_with_cache(r.opt, env_lookup, machine, budget, graph, &warnings, &found);
  // Keyed by the text: a bad calibration and a bad stored plan each warn once.
  for (const std::string& w : warnings) warn_once(w, w);
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.planned.graph = graph;
    r.planned.calibration_found = found;
    r.planned.plan = p;
  }
  r.registry.replan(p);
  if (r.omp_cap.load() > 0) omp_cap_set(p.threads);
  return true;
}
unsigned omp_generation() {
  return g ? g->omp_gen.load(std::memory_order_relaxed) : 0;
}

void framework_note(const std::string& name, const std::string& setting, const std::string& value,
                    bool applied, const std::string& why) {
  std::lock_guard<std::mutex> lock(g->mu);
  g->frameworks.push_back({name, setting, value, why, applied});
}

void pool_note(const PoolNote& n) {
  std::lock_guard<std::mutex> lock(g->mu);
  g->pools.push_back(n);
}

void fixed_pools_prepare() {
  monitor::fixed_pools_note();
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive || !r->node_member ||
      !r->opt.monitor || r->member_now.load(std::memory_order_acquire))
    return;
  // Join through the monitor thread (it alone keeps the membership), and wait
  // for it a few samples at most: the pools are then sized from this
  // process's share instead of the whole budget, and neighbours starting now
  // see this process in the registry before its work runs. A monitor that
  // does not answer in time (paused, a loaded node) costs the wait and
  // nothing else: the plan in force is used.
  r->announced.store(true, std::memory_order_release);
  const long wait_ms = 3L * r->opt.monitor_ms;
  for (long waited = 0; waited < wait_ms; waited += 5) {
    if (r->member_now.load(std::memory_order_acquire) || r->launcher.load()) return;
    const timespec ts{0, 5 * 1000000L};
    nanosleep(&ts, nullptr);
  }
}

unsigned plan_generation() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return 0;
  return r->registry.generation();
}

bool node_shared() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return false;
  // The monitor thread re-reads the node registry every sample; the share in
  // force is at most one sample old.
  std::lock_guard<std::mutex> lock(r->mu);
  return r->planned.budget.local_size > 1;
}

void warn_once(const std::string& key, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(g->mu);
    for (const std::string& k : g->warned_keys)
      if (k == key) return;
    g->warned_keys.push_back(key);
    g->warnings.push_back(message);
  }
  log::warn("%s", message.c_str());
}

const std::vector<int>& process_cpus() {
  return g->process_cpus;
}

std::vector<int> spawn_cpus(char* const envp[]) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return {};
  Runtime& r = *g;
  if (envp && r.planned.local_from == "none" && env_names_a_rank(envp)) {
    // A launcher spawning its ranks: they divide the node themselves.
    r.launcher.store(true, std::memory_order_relaxed);
    return r.process_cpus;
  }
  return r.process_mask.empty() ? r.process_cpus : r.process_mask;
}

namespace {

// "a-b,c" into buf (no allocation); false when it does not fit.
bool cpus_format(const cpu_set_t& set, char* buf, size_t len) {
  size_t at = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int hi = c;
    while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, &set)) ++hi;
    const int n = hi > c ? snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", c, hi)
                         : snprintf(buf + at, len - at, "%s%d", at ? "," : "", c);
    if (n < 0 || static_cast<size_t>(n) >= len - at) return false;
    at += static_cast<size_t>(n);
    c = hi;
  }
  return at > 0;
}

// The value of `name` in envp, or nullptr.
const char* env_in(char* const envp[], const char* name) {
  const size_t n = strlen(name);
  for (char* const* e = envp; e && *e; ++e)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}

}  // namespace

bool exec_prepare(char* const envp[], ExecPrep* out) noexcept {
  out->set_mask = false;
  out->entry[0] = '\0';
  if (!g || g->state.load(std::memory_order_acquire) == kUnselected) return false;
  const bool confined = g_exec.confined.load(std::memory_order_acquire);
  const bool inside = g_exec.inside.load(std::memory_order_acquire);
  if (!confined && !inside) return false;
  // A launcher's rank: its environment names a local rank that ours does not.
  static const char* const kRanks[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID", "SLURM_LOCALID"};
  bool rank = false;
  for (const char* name : kRanks) {
    const char* theirs = env_in(envp, name);
    const char* mine = getenv(name);
    if (theirs && (!mine || strcmp(mine, theirs) != 0)) rank = true;
  }
  const char* preload = env_in(envp, "LD_PRELOAD");
  const bool governed = preload && strstr(preload, "parwidth");
  const bool same = g->pid.load(std::memory_order_relaxed) == getpid();
  const gov::ExecShare d = gov::exec_share(confined, inside, same, rank, governed);
  if (d.mask == gov::ExecShare::Mask::kShare) out->set_mask = g_exec.share.load(&out->mask);
  if (d.mask == gov::ExecShare::Mask::kAffinity) out->set_mask = g_exec.affinity.load(&out->mask);
  if (d.mark) {
    cpu_set_t share;
    const size_t n = sizeof kInsideShareVar - 1;
    memcpy(out->entry, kInsideShareVar, n);
    out->entry[n] = '=';
    if (!g_exec.share.load(&share) ||
        !cpus_format(share, out->entry + n + 1, sizeof out->entry - n - 1))
      out->entry[0] = '\0';
    // Already said (the environment came down from the process that confined us).
    const char* have = env_in(envp, kInsideShareVar);
    if (out->entry[0] && have && strcmp(have, out->entry + n + 1) == 0) out->entry[0] = '\0';
  }
  return out->set_mask || out->entry[0];
}

pid_t own_pid() {
  return g ? g->pid.load(std::memory_order_relaxed) : 0;
}

// Python processes get parwidth's startup hook (python/sitecustomize.py, next
// to this library as parwidth-python/): it puts parwidth's part of
// PYTHONPATH back as it was and hooks what only Python-level code reaches
// (ONNX Runtime's sessions; the BLAS libraries that imports load). Inert
// without this library. Interpreters started with -E or -I skip it.
static void python_startup_hook(const Runtime& r) {
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

void hooks_bind_exec() {
  if (g_hooks.exec_bind) g_hooks.exec_bind();
}

void hooks_register(const HookEntries& entries) {
  g_hooks = entries;
}

void on_load() {
  // A secure-exec (setuid/setgid, capabilities) process is left completely alone.
  if (getauxval(AT_SECURE)) return;
  g = new (g_storage) Runtime();
  Runtime& r = *g;
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
  if (!opt::process_selected(r.opt, r.names)) return;
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
  in.planned = s == kActive ? &r.planned : nullptr;
  in.threads = r.registry.snapshot();
  if (s == kActive) {
    try {
      pins_as_they_stand(&in.threads);
    } catch (...) {
    }
  }
  in.threads_ended = r.registry.ended();
  in.threads_unlisted = r.registry.ended_unlisted();
  in.originals_looked_up = g_hooks.real_lookups ? g_hooks.real_lookups() : 0;
  in.omp_cap = r.omp_cap.load();
  in.forked_child = r.forked_child;
  in.monitor_json = monitor::report_json();
  in.functions_json = functions::functions_json();
  in.function_memory_json = functions::memory_json();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (const FrameworkNote& f : r.frameworks)
      in.frameworks.push_back({f.name, f.setting, f.value, f.applied, f.why});
    for (const PoolNote& p : r.pools)
      in.pools.push_back({p.library, p.object, p.before, p.after, p.set_by, p.applied, p.why});
    in.warnings = r.warnings;
    // Never activated: not said on stderr, but the report lists them.
    if (s != kActive && s != kFailed) in.warnings = r.load_warnings;
  }
  report::exit_write(in);
}

void single_threaded_begin() {
  if (!selected() || own_pid() != getpid()) return;
  try {
    monitor::pause_sampler();
  } catch (...) {
  }
}

void single_threaded_end() {
  if (!selected() || own_pid() != getpid()) return;
  try {
    monitor::resume_sampler();
  } catch (...) {
  }
}

void on_fork_prepare() {
  if (selected()) g->mu.lock();
}
void on_fork_parent() {
  if (selected()) g->mu.unlock();
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
  r.node_cpus.clear();
  r.omp_capping = false;
  // The forking thread may be a pinned pool member; the child's main thread
  // must not keep that narrowed mask (its children and sched_getaffinity
  // would inherit it): it gets the process's mask, the share when confined.
  const std::vector<int>& wide = r.process_mask.empty() ? r.process_cpus : r.process_mask;
  if (t_pool >= 0 && !wide.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : wide)
      if (c < CPU_SETSIZE) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
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
  functions::after_fork();
  r.warnings.clear();
  r.warned_keys.clear();
  r.fail_reason.clear();
  // Another thread may have held the registry's lock at fork(): start afresh
  // rather than lock it (what the old one holds is small and stays behind).
  new (&r.registry) gov::ThreadRegistry();
  new (&r.repin_mu) std::mutex();  // likewise: the monitor may have held it
  r.omp_cap.store(0);
  r.omp_gen.fetch_add(1);
  // Governed on its own: activates again on its first thread, reusing the machine.
  r.state.store(kInactive, std::memory_order_release);
}

}  // namespace pw::rt
