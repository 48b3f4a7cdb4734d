// runtime/monitor: the run-time watcher — counters/ samples in, governor/
// oversubscription decisions out, applied to the running process.
#pragma once

#include <cstdint>
#include <string>

#include "counters/counters.h"
#include "governor/thread_table.h"

namespace pw::monitor {

struct Setup {
  counters::ThreadCreateFn create;  // the real pthread_create: the sampler is not governed
  gov::ThreadTable* threads;        // tid -> assigned core set, for strays (never null)
  // Later OpenMP regions use this team cap; why: the action's text.
  void (*omp_cap_set)(int cap, const char* why);
  bool apply;     // govern: apply actions; observe: only record them
  bool use_papi;  // PARWIDTH_PAPI auto/on: counters opened by monitor::start on the
                  // calling thread if it is the only one; off: /proc only
  // Called on the sampler thread before each sample is judged (the child
  // processes' and the node registry's checks), with the time since the first sample and the CPUs'
  // worth of the process's threads that ran or waited to run in the interval
  // (its demand, whatever else loads the machine); may be null.
  void (*tick)(uint64_t t_ns, double demand_cpus);
  // PAPI's verdict kept for this boot, replaced when it was decided anew
  // (counters::Papi::open); null: nothing kept.
  std::string* papi_verdict;
};

// Starts the sampler thread. budget_cpus: the cores (or quota) of the budget;
// omp_cap: the planned team cap (0 = OpenMP not capped).
void start(const Setup& setup, int period_ms, double budget_cpus, int omp_cap);
// A framework started thread pools that cannot be resized at run time (a
// TensorFlow or ONNX Runtime session's): from the next
// sample on, the detector's advice says so. Callable from any thread, also
// before start; kept across a fork.
void fixed_pools_note();
// Whether fixed_pools_note was called (in this process, or in its parent before a fork).
bool fixed_pools_noted();
// Whether the process serves requests, since the monitor started: a thread of
// it was seen waiting for events (an event loop) while it holds a listening
// socket. A batch job's thread that waits in poll or select (a DataLoader's
// main thread for its workers' batches, a parent for its child's output)
// listens on nothing, and stays a batch job.
bool event_loop_seen();
// Whether the threads the process made after activation (its pools', its
// own) have run at all: together 20 ms of CPU or run-queue time, since the
// monitor started. A pool made at load and never used does not count.
bool threads_ran();
// The budget changed (node registry): the detector judges against budget_cpus and restarts its
// team cap at omp_cap. Applied before the next sample is judged; callable from any thread.
void rebudget(double budget_cpus, int omp_cap);
void stop();  // at exit, before the report
// Around a call that needs a single-threaded process (unshare(CLONE_NEWUSER),
// setns into a user or mount namespace): the sampler thread leaves the
// process, and comes back after the call. Callable from any thread; nested
// calls are counted.
void pause_sampler();
void resume_sampler();
void reset_after_fork();  // in the fork child: the thread is gone
// Whether the PAPI counters are in use; *why: "ok: ..." or why not. Known once monitor::start
// returned.
bool papi_in_use(std::string* why);
std::string report_json();  // the report's "monitor" object, or "" if never started
// The detector's verdict after the last sample judged: 1 oversubscribed, 0 not, -1 while the
// sampler does not run (never started, paused or stopped). Read on the sampler thread
// (Hooks::tick).
int oversubscribed_now();

}  // namespace pw::monitor
