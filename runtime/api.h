// runtime/api: the process-wide state of a governed process, and the small
// API the hooks use. Everything is decided once, at activation; the hooks read
// it without locks afterwards.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "core/options.h"
#include "core/planning.h"
#include "core/report.h"
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

// governor/setting's decision for a runtime's thread setting, with this
// process's mode (governing()) and PARWIDTH_OVERRIDE filled in.
gov::SettingDecision setting_decide(int plan, int current, bool user_set,
                                    gov::SettingKind kind = gov::SettingKind::kSet);

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
opt::Pin pin_mode();
// The CPUs of a pool, or of a single cpu; false if there is nothing to pin to.
bool cpus_for(const gov::Assignment& a, std::vector<int>* cpus);

// The OpenMP team cap (0 = none) and its generation (bumped when it changes).
int omp_cap();
unsigned omp_generation();
// Later OpenMP regions use this cap (the monitor lowers it; a framework hook
// that re-plans raises or lowers it).
void omp_cap_set(int cap);

// The plan in force (an empty plan before activation).
const gov::Plan& plan();

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
// node registry again, and a member gives its share back at the monitor's next
// sample. Callable from any thread, also before activation.
void exit_begins();

// The generation of the plan in force: it changes whenever the plan does (a
// node re-division, a framework's graph). 0 before activation. One atomic load.
unsigned plan_generation();

// True when other governed processes share this process's node (a launcher's
// local size or the node registry's members, as of the monitor's last sample),
// or are expected to (PARWIDTH_NODE_EXPECT).
bool node_shared();

// The plan for pools a framework makes once and cannot resize: plan(), or,
// while fewer governed processes than PARWIDTH_NODE_EXPECT are on the node,
// the plan on the share this process will have once they are all there
// (*why then says so; empty otherwise). Call after fixed_pools_prepare.
gov::Plan fixed_pools_plan(std::string* why);

// A warning printed once (per key) and kept for the report.
void warn_once(const std::string& key, const std::string& message);

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

// Lifecycle (preload/main.cpp).
void on_load();
void on_exit();
void on_fork_prepare();
void on_fork_parent();
void on_fork_child();

}  // namespace pw::rt
