// runtime/state: the one process-wide Runtime that runtime/'s files share, and the
// helpers they call across files. Internal to runtime/: hooks/ include api.h.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/node.h"
#include "core/options.h"
#include "core/planning.h"
#include "governor/membership.h"
#include "governor/node_share.h"
#include "governor/pools_wait.h"
#include "governor/thread_table.h"
#include "runtime/api.h"
#include "runtime/in_force.h"

namespace pw::rt {

enum State : int { kUnselected, kInactive, kActivating, kActive, kFailed };

// The monotonic clock in nanoseconds: the owner's timeline (timeline.cpp).
uint64_t monotonic_ns();

// Never destroyed: threads may still run hooks while the process exits.
struct Runtime {
  opt::Options opt;
  std::vector<std::string> names;  // program names for include/exclude
  bool omp_env_explicit = false;
  std::string omp_env_value;
  std::atomic<int> state{kUnselected};
  std::atomic<pid_t> pid{0};
  // What activation found that no later change alters (kept for a fork child's
  // activation): the machine, where the local rank came from, whether the node
  // registry may divide, the per-boot cache directory.
  bool have_machine = false;
  topo::Machine machine;
  std::string local_from;
  bool node_registry = false;
  std::string boot_dir;
  // The plan in force: budget (share), graph, plan and OpenMP cap, changed only
  // through owner.change (runtime/in_force.h), read as snapshots.
  PlanOwner owner{monotonic_ns};
  std::string fail_reason;
  gov::ThreadTable threads;  // the governed threads and their pools and cores
  // Held while pinned threads move to a new plan: the monitor's repin_threads
  // against a thread that starts meanwhile and catches up (thread_catch_up).
  std::mutex repin_mu;
  std::vector<int> process_cpus;
  // The mask of the process's unpinned threads (the main thread, helpers)
  // while its share is smaller than process_cpus; empty = not confined.
  std::vector<int> process_mask;
  // The OpenMP cap in force and its generation, for the hooks that run before
  // every parallel region: mirrors of owner.current()->omp_cap, written only by
  // the owner's applier (plan_apply), so they change in the owner's order (and
  // reset in a fork child, with the owner).
  std::atomic<int> omp_cap{0};
  std::atomic<int> team_cap{0};  // mirror of owner.current()->team_worth
  std::atomic<unsigned> omp_gen{1};
  // The program called torch.compile: torch's thread count is guarded by
  // compiled code (governor/pools_omp's omp_team_resize).
  std::atomic<bool> omp_count_guarded{false};
  // The owner's generation, mirrored for the per-call check of Python sessions.
  std::atomic<unsigned> generation{0};
  bool forked_child = false;
  // The notes, pools and warnings.
  std::mutex mu;
  std::vector<report::FrameworkNote> frameworks;
  std::vector<PoolNote> pools;
  // Pools a framework made once and cannot resize (fixed_pool_made), under mu.
  struct FixedPool {
    std::string framework, pool;
    int threads;
  };
  std::vector<FixedPool> fixed_pools;
  std::vector<std::string> warnings;
  std::vector<std::string> warned_keys;
  std::vector<std::string> load_warnings;  // bad option values, said at activation
  // How the runtimes' idle threads wait (runtime/waits.cpp): the decisions for
  // the variables set at load (libgomp's, OpenBLAS's, in that order), the
  // runtimes already loaded then, and the ones decided later by the hooks
  // (libomp's blocktime, TensorFlow's spinning; under mu).
  struct Waits {
    gov::WaitDecision env[2];
    std::vector<std::string> at_start;
    gov::WaitDecision blocktime, tf;
    bool decided[2] = {false, false};
  } waits;
  // The runtimes' own values read by the program's side before exit
  // (runtime_values_set), under mu.
  std::vector<RuntimeValue> runtime_values;
  bool runtime_values_given = false;
  // The node registry (core/node.h): the budget before the node is divided,
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
  // Exit has begun (exit_begins, on_exit): the membership never joins again.
  std::atomic<bool> exiting{false};
  // PARWIDTH_NODE_EXPECT with fewer members on the node than expected: this
  // member's share once they are all there (node_share_expected), from the
  // monitor's last scan; empty otherwise. Under mu.
  gov::NodeShare expected_share;
  std::vector<int> node_cpus;
  int node_worth = 0;  // the cores' worth of threads planned on node_cpus (shared cores: less)
  int node_team = 0;   // the OpenMP teams' worth on cores shared by time (0: not)
  int node_changes = 0;
  unsigned child_checks = 0;     // membership ticks, for a look at its children every fifth
  uint64_t node_refresh_ns = 0;  // when our entry was last rewritten (monitor time)
  // Monitor samples seen as a member, and the members the last scan listed,
  // each with the last sample that listed it: a re-division says how many
  // samples after a member's last listing it came.
  uint64_t node_samples = 0;
  std::vector<std::pair<long, uint64_t>> node_listed;
  // Threads that forked or spawned a child (their /proc/self/task/<tid>/children
  // list it; 0: free): written by the fork and spawn hooks, read by the monitor.
  std::atomic<long> forkers[8] = {};
  // The monitor thread's look at the children (children.cpp): whether they run
  // (held), and each child's CPU time in clock ticks at the last sample.
  gov::ChildrenHold children_hold;
  std::vector<std::pair<long, unsigned long long>> children_ticks;
  unsigned children_samples = 0;
  // Each governed thread's tid, under a key whose destructor retires its record.
  pthread_key_t thread_key{};
  bool thread_key_made = false;
};

// Constructs the Runtime in its static storage (on_load) and points g at it.
Runtime* state_create();
extern Runtime* g;           // null until on_load (and in a secure-exec process)
extern HookEntries g_hooks;  // registered by hooks/ at load

// A CPU set that an exec hook reads without a lock (possibly in a vfork
// child) while the monitor thread rewrites it at a re-division: a torn read
// hands one exec a mix of two shares, never memory that is gone. Fixed at
// CPU_SETSIZE (1024) CPUs, as the exec path's cpu_set_t is (topology/affinity.h,
// the Fixed functions): nothing there may allocate.
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
extern ExecState g_exec;

// The pool of the calling thread (-1: not a pool member).
extern thread_local int t_pool __attribute__((tls_model("initial-exec")));

// getenv, as an opt::EnvLookup.
const char* env_lookup(const char* name);

// threads.cpp
void thread_ended(void* tid);
int repin_threads(Runtime& r);
void pins_as_they_stand(std::vector<gov::ThreadRecord>* threads);

// child_masks.cpp
int process_confine(Runtime& r, const std::vector<int>& mask);
void process_note(Runtime& r, int moved);
bool process_confines(const Runtime& r);
bool env_names_a_rank(char* const envp[]);

// waits.cpp
// At load, before the program loads its runtimes: the bounded waits set in the
// environment (a governed process), or what a governed parent set taken back (a
// process parwidth does not govern).
void waits_at_load(Runtime& r, bool selected);
// At activation: the report's notes on them.
void waits_note(Runtime& r);

// timeline.cpp
// The report's plan_timeline array and in_force object.
std::string timeline_json(const Runtime& r);
std::string in_force_json(Runtime& r, const InForce& now);

// activation.cpp
// Applies a change through the owner with the runtime's planner and applier
// (plan_apply): every change of the plan in force goes through here. Returns
// what is in force afterwards (null before activation).
std::shared_ptr<const InForce> plan_change(Runtime& r, const Change& c);
// The monitor's OpenMP cap change (monitor::Setup::omp_cap_set).
void omp_cap_change(int cap, const char* why);

// membership.cpp
// The plan on budget b. With 0 < worth < b's cores (cores shared with more
// members than cores) it is made for the first `worth` cores and spread over
// all of them (gov::plan_shared); every change of the plan in force plans so.
gov::Plan plan_on(const Runtime& r, const topo::Budget& b, int worth,
                  const planning::GraphSummary& graph, std::vector<std::string>* warnings,
                  bool* found);
void node_join(Runtime& r);
void node_tick(uint64_t t_ns, double busy_cpus);

// children.cpp
// Appends the pids that /proc/self/task/<tid>/children lists (the children
// that thread forked or spawned); nothing when it cannot be read.
void task_children(const std::string& tid, std::vector<long>* pids);
// On the monitor thread, every sample: whether a child process ran since the
// last one, held for a second (gov::children_step), and the pin mode that puts
// in force (a kChildren change).
void children_tick();
// The monitor's tick (monitor::Setup::tick): the children, then the node registry.
void process_tick(uint64_t t_ns, double busy_cpus);

}  // namespace pw::rt
