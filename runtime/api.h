// runtime/api: the small API the hooks use into a governed process's runtime.
// The options and the selection are read once, at load; the plan in force
// changes after activation (a framework's graph, the node's division, the
// monitor's OpenMP cap), always through the runtime's one owner, and the hooks
// read it as consistent snapshots (plan()) or, on the hot paths, as atomics
// (omp_cap, omp_generation, plan_generation).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "core/options.h"
#include "core/planning.h"
#include "core/report.h"
#include "governor/pools_wait.h"
#include "governor/setting.h"
#include "governor/thread_table.h"
#include "runtime/monitor.h"

namespace pw::rt {

// Constructor-time decision: options read, process selected (mode, include,
// exclude, not secure-exec). Cheap; false = every hook passes straight through.
bool selected();
const opt::Options& options();

// Activation on first need (first thread, first OpenMP region). Returns true
// when a plan is in force (govern or observe). Never blocks on another
// thread's activation: a hook that races it passes through.
bool ensure_active();
bool governing();  // active and mode == govern

// The pool of the calling thread (-1: not a pool member).
int current_pool();
void current_pool_set(int pool);

gov::Assignment thread_assign(int creator_pool);
void thread_record(const gov::ThreadRecord& r);
// Called by a new pinned thread once recorded: if the plan changed since it
// took its pool and core (generation), and the move of pinned threads to the
// new plan did not see it, it moves itself. True if it moved.
bool thread_catch_up(long tid, unsigned generation);
// At the exit of a thread parwidth pinned: if its affinity was changed since
// (an OpenMP runtime's own binding, the program), its record says so.
void own_pin_check();
gov::PinMode pin_mode();
// The CPUs of a pool, or of a single cpu; false if there is nothing to pin to.
bool cpus_for(const gov::Assignment& a, std::vector<int>* cpus);

// The OpenMP team cap in force (0 = none) and its generation (bumped when it changes).
int omp_cap();
unsigned omp_generation();
// On cores shared by time with other servers: the team's worth (0: not).
int team_cap();
// The program called torch.compile (`by` names the trigger, for the
// report): from now on a thread's OpenMP team size, which is torch's thread
// count, is guarded by compiled code.
void omp_count_guarded_from(const char* by);
bool omp_count_guarded();

// The plan in force, a copy of one consistent snapshot (an empty plan before
// activation): its pools, threads and core sets belong to the same generation.
gov::Plan plan();

// Whether the plan in force came from a model graph.
bool graph_known();

// A framework handed us its graph (a session, PARWIDTH_MODEL read late):
// plan again with its width. Threads created from now on follow the new plan.
// Returns false (and changes nothing) when not active.
bool graph_adopt(const planning::GraphSummary& graph);

// A framework/runtime setting that was applied or left alone, for the report.
void framework_note(const std::string& name, const std::string& setting, const std::string& value,
                    bool applied, const std::string& why);
// A thread pool of a library beside the frameworks' (a BLAS library's), as
// the report lists it.
using PoolNote = report::PoolNote;
void pool_note(const PoolNote& n);
// A framework is creating thread pools that it cannot resize later (a
// TensorFlow session or eager context, an ONNX Runtime session). Where the
// node registry is in use and this process is not yet a member, it joins now
// (through the monitor thread; this waits up to three monitor periods), so
// that plan() afterwards is this process's share of the node. The monitor's
// advice on oversubscription also says that such pools exist.
void fixed_pools_prepare();
// Such a pool was made with `threads` threads: when the node is later divided
// so that the plan gives fewer, the report says that this pool keeps its size.
void fixed_pool_made(const std::string& framework, const std::string& pool, int threads);

// The process has begun to exit (the interpreter finalises, exit() runs): its
// teardown is not work that needs a share of the node, so it never joins the
// node registry again; a member keeps its share until it exits or its idle
// hold runs out (its last work may still be finishing). Callable from any
// thread, also before activation.
void exit_begins();

// The generation of the plan in force: it changes whenever what is in force
// does (a node re-division, a framework's graph, the monitor's OpenMP cap). 0
// before activation. One atomic load.
unsigned plan_generation();

// Something a framework applied for the plan in force later than the change
// itself (an ONNX Runtime session made again for it): the report's timeline
// lists it under the generation it was made for.
void plan_applied(unsigned generation, const std::string& what);

// How a runtime's idle threads wait, for the report (runtime/waits.cpp): the
// bounded wait parwidth set, the user's, or the runtime's default, for one of its
// objects (a file name; for libgomp and OpenBLAS it says whether that copy was
// loaded before parwidth could set its variable).
std::string pool_wait_text(gov::WaitKnob knob, const std::string& object);
// A hook decided a wait the runtime takes later than its load (libomp's
// blocktime through its API, TensorFlow's spinning at its pools' constructor).
void wait_decided(gov::WaitKnob knob, const gov::WaitDecision& d);

// A runtime's thread setting as the runtime itself reports it (its own getter),
// for the report's `in_force`: what is in force at exit, next to the plan.
struct RuntimeValue {
  std::string runtime;  // "openmp", "torch", "openblas", "onnxruntime", ...
  std::string object;   // the library (file name) or session it was read from
  std::string setting;  // "max threads (main thread)", "intra-op threads", ...
  int value = -1;
  std::string waits;  // how its idle threads wait (pool_wait_text), where known
};
// Values read by the program's own side before it exits (Python's atexit:
// torch's counts, ONNX Runtime sessions' options), with the hooks' own reads
// made at the same moment. The report at exit uses the last set given; without
// one it reads what the hooks can read at exit (HookEntries::runtime_values).
void runtime_values_set(std::vector<RuntimeValue> values);

// True when other governed processes share this process's node (a launcher's
// local size or the node registry's members, as of the monitor's last sample),
// or are expected to (PARWIDTH_NODE_EXPECT).
bool node_shared();

// The plan for pools a framework makes once and cannot resize: plan(), or,
// while fewer governed processes than PARWIDTH_NODE_EXPECT are on the node,
// the plan on the share this process will have once they are all there
// (*why then says so; empty otherwise). Call after fixed_pools_prepare.
gov::Plan fixed_pools_plan(std::string* why);

// True when other governed processes may share this process's cores now or
// later: it takes part in the node registry, or a launcher gave it a local
// size above 1. Pools made once (TensorFlow's) then do not spin while idle.
bool node_may_share();

// A warning printed once (per key) and kept for the report.
void warn_once(const std::string& key, const std::string& message);

// parwidth's own work inside a hook (or the preload's constructor or
// destructor) failed (`why`: what was thrown) and parwidth stepped aside: the
// host's call goes on as asked (hooks/fail_open.h).
// One warning per key, kept for the report; where even that cannot be kept
// (out of memory, or before on_load) it is only printed. Never throws.
void fail_open_note(const char* key, const char* why) noexcept;

// The pid recorded at load and in the fork handler: a vfork()ed child (which
// shares our memory and runs no fork handlers) has another one.
pid_t own_pid();

// The process's affinity at activation. While its share of the node is
// smaller, the process's unpinned threads live inside the share instead.
const std::vector<int>& process_cpus();

// The CPUs a child spawned with environment `envp` starts on: the share while
// the process is confined to one, else its affinity; the whole affinity for a
// launcher's rank (its environment names a local rank that ours does not), which
// plans its own share. Empty when not active.
std::vector<int> spawn_cpus(char* const envp[]);

// What the runtime calls in hooks/ (preload/ does not depend on hooks/):
// hooks/ registers these at load, before preload/main.cpp's constructor.
// A null entry is skipped.
struct HookEntries {
  void (*omp_activate)();                       // before any OpenMP runtime binds threads
  counters::ThreadCreateFn (*thread_create)();  // the real pthread_create, for the monitor
  void (*exec_bind)();                          // the exec hooks' originals (selected processes)
  unsigned long long (*real_lookups)();         // per-caller originals looked up (the slow path)
  void (*blas_follow)(int threads);             // BLAS pools parwidth sized follow a new plan
  // The OpenMP runtimes' and BLAS pools' own counts as they report them now
  // (runtime_values_set); safe at exit.
  void (*runtime_values)(std::vector<RuntimeValue>* out);
};
void hooks_register(const HookEntries& entries);
void hooks_bind_exec();  // calls the registered exec_bind, if any

// The environment variable that tells a program exec'ed by a confined process
// (or by one of its children) that its affinity is that process's share: it
// plans inside it and does not take a share of the node again.
constexpr char kInsideShareVar[] = "PARWIDTH_INSIDE_SHARE";

// What an exec hands the new program (gov::exec_share decides): the calling
// thread's mask for it, and an environment entry naming the share. No
// allocation, no lock, no exception: it runs in vfork children too, so the
// mask is a fixed cpu_set_t (the first 1024 CPUs), for topology/affinity.h's
// allocation-free Fixed functions.
struct ExecPrep {
  bool set_mask = false;
  cpu_set_t mask;
  char entry[3072];  // "PARWIDTH_INSIDE_SHARE=<cpulist>", or empty
};
bool exec_prepare(char* const envp[], ExecPrep* out) noexcept;

// Around a call that the kernel refuses in a multi-threaded process: our
// monitor thread leaves for the duration (hooks/namespace.cpp).
void single_threaded_begin();
void single_threaded_end();

// The calling thread started a child process (fork's parent handler, the
// spawn hooks): the monitor reads that thread's children too (children.cpp).
// No allocation, no lock.
void child_started();

// Lifecycle (preload/main.cpp).
void on_load();
void on_exit();
void on_fork_prepare();
void on_fork_parent();
void on_fork_child();

}  // namespace pw::rt
