// governor/oversub: is this process asking for more CPUs than its budget, and what to do about it.
//
// Pure policy: samples in (counters/ measures them), actions out (the preload applies them and
// lists them in the report's monitor.actions). No /proc, no PAPI, no clock, no allocation: the
// sampler thread calls step() on every sample.
//
// Two sources: /proc (always) and the counters (where PAPI counts, see OversubSample).
// The signal: run-queue delay per second is the average number of this process's threads that
// were runnable but not running; divided by the budget's CPUs it is the "wait ratio". 0 means
// nobody waited; 1 means, on average, one thread waited for every budget CPU. Involuntary switches
// per second per CPU (preemptions) back it up.
//
// Whose fault the waiting is: run time + run-queue delay per second is the average number of
// this process's runnable threads (its demand). Only the part of the wait ratio that the demand
// in excess of the budget explains is this process's own oversubscription ("own ratio"), and only
// that shrinks teams. Where counters count, the demand is the counters' task clock (threads and
// child processes) plus the waiting: a process whose forked workers busy its CPUs is
// oversubscribing them itself, which /proc alone (its threads only) would take for another
// process's load. The rest ("contention ratio") is load from other processes on the same
// CPUs: fewer threads here would not make them go away, so it is recorded and nothing changes.
#pragma once

#include <sched.h>

#include <cstddef>
#include <cstdint>

namespace pw::gov {

struct OversubConfig {
  double budget_cpus = 1;  // CPUs this process may use (cores of its budget, or the quota)
  int omp_cap = 0;         // the planned OpenMP team cap; 0 = OpenMP teams are not capped
  // The process runs framework thread pools that cannot be resized at run time (TensorFlow
  // and ONNX Runtime sessions): the advice names them.
  bool fixed_pools = false;
  double enter_wait_ratio = 0.5;   // a sample is "hot" at or above this own ratio ...
  double enter_invol_rate = 200;   // ... or at this many preemptions/s per CPU with wait >= leave
  double leave_wait_ratio = 0.25;  // a sample is "calm" below this own ratio
  // Contention is only recorded, so it is entered sooner: another process's busy thread on
  // each of our CPUs makes our threads wait half the time, a ratio of 0.5 that samples
  // scatter around; the own-ratio threshold would record it only now and then.
  double enter_contention_ratio = 0.3;
  double leave_contention_ratio = 0.15;
  int enter_samples = 3;     // consecutive hot samples to flag (3 x 100 ms: within 1 s)
  int leave_samples = 5;     // consecutive calm samples to clear
  int relower_samples = 5;   // still hot this many samples after a lowering: lower again
  int restore_samples = 50;  // calm this many samples after an episode: double the cap back
};

// One of the program's own threads (not a pool's), by its demand in an interval.
struct OwnThread {
  long tid = 0;
  double cpus = 0;          // running or waiting to run, CPUs' worth
  bool main = false;        // the process's first thread
  bool event_loop = false;  // seen waiting for events (epoll, poll, select): an event loop
};

// One sampler interval (counters::Sample, plus what the governor knows: stray threads).
struct OversubSample {
  uint64_t t_ns = 0;            // when, on any clock the caller uses consistently
  uint64_t dt_ns = 0;           // interval length; samples with 0 are ignored
  uint64_t runq_wait_ns = 0;    // sum of the process's threads' run-queue delay in the interval
  uint64_t run_ns = 0;          // the process's CPU time in the interval (its threads' run time)
  uint64_t invol_switches = 0;  // sum of their involuntary switches in the interval
  uint32_t threads = 0;         // threads in the process
  uint32_t strays = 0;          // governed threads whose affinity the program moved off their pool
  // Whose threads make the demand, where the threads were read with their
  // roles (thread_is_pool): the pools' threads and the program's own threads,
  // CPUs' worth running or waiting in the interval; the busiest own thread,
  // and the event loop (or else the next busiest).
  bool have_roles = false;
  double pool_cpus = 0, own_cpus = 0;
  OwnThread own_top[2];
  // Event counts in the interval where a counter backend counts them (PAPI), copied into each
  // action so the report shows what the counters said when it acted. The counters are
  // inherited: they count this process's threads and the child processes it started since
  // (forked workers, helpers), which run on its CPUs (children inherit the share). Where
  // they count, the task clock enters the decision: the CPU time of the children is this
  // process's own demand too (see step()). Their switch counts include voluntary ones and
  // are reported only.
  bool have_counters = false;
  bool have_hardware = false;
  uint64_t context_switches = 0, cpu_migrations = 0, task_clock_ns = 0;
  uint64_t cycles = 0, instructions = 0, stall_cycles = 0, cache_misses = 0;
};

enum class ActionKind {
  kOversubscribed,  // entered the oversubscribed state
  kRecovered,       // left it
  kLowerOmpCap,     // cap later OpenMP teams at new_cap
  kRaiseOmpCap,     // calm for long enough: give threads back, up to the planned cap
  kAffinityKept,    // `strays` governed threads run where the program put them: left there
  kAdvice,          // nothing we can resize: tell the user what would
  kContention,      // waiting for CPUs that other processes' load causes: recorded, no change
  kContentionEnded,
};
const char* action_kind_name(ActionKind k);  // "oversubscribed", "lower_omp_cap", ...

struct OversubAction {
  uint64_t t_ns = 0;
  ActionKind kind = ActionKind::kAdvice;
  double wait_ratio = 0;             // the numbers that triggered it
  double own_ratio = 0;              // the part of wait_ratio that this process's demand explains
  double contention_ratio = 0;       // the rest: other processes' load on the same CPUs
  double invol_rate = 0;             // involuntary switches per second per budget CPU
  double demand_cpus = 0;            // this process's runnable threads on average (run + wait),
                                     // its child processes' CPUs included where counters count them
  double children_cpus = 0;          // of which child processes' CPU time (counters' task clock
                                     // beyond the threads' run time; 0 without counters)
  double children_waiting_cpus = 0;  // and their run-queue wait, estimated: children_cpus times
                                     // the threads' wait per unit of run time (in demand_cpus)
  int old_cap = 0;                   // OpenMP cap before / after (equal when unchanged)
  int new_cap = 0;
  uint32_t strays = 0;
  uint32_t threads = 0;
  OversubSample counters;  // the sample that triggered it (its event counts, if any)
  char text[640] = "";     // one line for humans
};

struct OversubSummary {
  uint64_t samples = 0;
  bool oversubscribed = false;  // ever flagged
  bool oversubscribed_now = false;
  double max_wait_ratio = 0;
  double max_own_ratio = 0;
  double max_contention_ratio = 0;
  bool contention = false;  // ever waited on other processes' load (kContention recorded)
  int episodes = 0;
  int omp_cap = 0;  // the cap now
  uint64_t actions = 0;
};

// The most actions one step() produces.
constexpr size_t kMaxActions = 6;

class OversubDetector {
 public:
  explicit OversubDetector(const OversubConfig& cfg);
  // Feeds one sample; writes at most `cap` actions to out and returns how many (a few at most:
  // size out for kMaxActions). Actions beyond cap are dropped, and counted in summary().actions
  // anyway.
  size_t step(const OversubSample& s, OversubAction* out, size_t cap);
  // The budget changed (the node's cores were divided again): judge against the new budget,
  // and start the team cap over from the new plan's cap. Episode history is kept.
  void rebudget(double budget_cpus, int omp_cap);
  bool oversubscribed() const { return in_; }
  int omp_cap() const { return cap_; }
  OversubSummary summary() const;
  const OversubConfig& config() const { return cfg_; }
  // A framework started pools of that kind (OversubConfig::fixed_pools).
  void fixed_pools_set(bool v) { cfg_.fixed_pools = v; }

 private:
  void lower(const OversubSample& s, double own, double invol, OversubAction* a);
  OversubConfig cfg_;
  bool in_ = false;
  bool ever_ = false;
  bool advised_ = false;  // this episode
  bool contended_ = false, contended_ever_ = false;
  int hot_run_ = 0, calm_run_ = 0, since_lower_ = 0;
  int busy_run_ = 0, quiet_run_ = 0;  // contention's hysteresis
  int cap_ = 0;
  int episodes_ = 0;
  uint32_t strays_reported_ = 0;
  uint64_t samples_ = 0, actions_ = 0;
  double max_wait_ = 0, max_own_ = 0, max_contention_ = 0;
};

// A governed thread is a stray when it may run outside the core set of its pool (its affinity is
// not a subset of `assigned`) or was last seen on a CPU outside it. Its affinity was set after
// ours, by the program or a library it uses: the monitor leaves it there and reports it.
bool thread_is_stray(const cpu_set_t& allowed, int cpu, const cpu_set_t& assigned);

}  // namespace pw::gov
