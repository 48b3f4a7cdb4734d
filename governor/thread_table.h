// governor/thread_table: which pool and core each new thread gets, and the record
// of every thread the governed runtimes created (for the report).
//
// assign() is called inside pthread_create, from any thread, concurrently: it
// takes no lock and does not allocate. The plan it follows can be replaced
// while threads are being created (a framework hands us its graph, the node's
// cores are divided again): each plan is an immutable layout swapped in
// atomically; replaced layouts are kept, never freed, so a racing assign()
// never reads freed memory (a process sees a handful of plans).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "governor/pin.h"
#include "governor/plan.h"

namespace pw::gov {

struct Assignment {
  int pool = -1;            // -1: not governed (no plan)
  int cpu = -1;             // the one CPU for PinMode::kCore, else -1
  unsigned generation = 0;  // of the plan it was taken from
};

struct ThreadRecord {
  long tid = 0;
  std::string creator;  // which library asked for the thread, and who called it
  int pool = -1;
  int cpu = -1;             // pinned to this single CPU, or -1
  bool pinned = false;      // affinity was set (to cpu or to the pool's set)
  std::string pin_error;    // why pinning failed, if it did
  bool ended = false;       // the thread has exited
  unsigned generation = 0;  // of the plan its pool and core were taken from
};

// The CPUs a thread with assignment `a` in `plan` is pinned to: its one CPU,
// else its pool's core set. False when there is nothing to pin to (no pool,
// or a pool the plan does not have).
bool assignment_cpus(const Plan& plan, const Assignment& a, std::vector<int>* cpus);

// Whether a thread that `creator` (ThreadRecord::creator) started is a pool's:
// an OpenMP runtime's team, a framework's or a BLAS library's pool. The other
// threads are the program's own (its code's, its interpreter's: an event
// loop, request threads, the callers of a model), which run beside the pools
// and which no pool size changes; so are the main thread and the threads that
// existed before activation, which have no record.
bool thread_is_pool(const std::string& creator);

// The report lists at most this many ended threads (the first ones); the
// others are counted. Live threads are all listed.
constexpr size_t kEndedListed = 256;

class ThreadTable {
 public:
  ThreadTable();
  ThreadTable(const ThreadTable&) = delete;
  ThreadTable& operator=(const ThreadTable&) = delete;

  // Starts over with a plan (activation, fork child): records are dropped.
  void reset(const Plan& plan, PinMode pin);
  // Follows a new plan from now on; records are kept. Returns its generation.
  unsigned replan(const Plan& plan);
  // The same, and pins new threads by `pin` from now on.
  unsigned replan(const Plan& plan, PinMode pin);
  PinMode pin() const;

  // A new thread created by a member of creator_pool (>= 0) joins that pool
  // and takes its next core; one created by a non-member (the main thread,
  // threads that existed before activation) starts the next pool round-robin.
  // The main thread counts as the first member of pool 0 (it is never pinned,
  // but it runs the first team's work), so pool 0 hands out its cores from the
  // second one.
  Assignment assign(int creator_pool);
  // A thread of `pool` (of an earlier plan) moving to the plan in force: pool
  // mod its pools, and that pool's next core.
  Assignment reassign(int pool);

  void record(const ThreadRecord& r);
  // The thread tid exited: its record leaves the live ones (a later thread
  // may get the same tid); the first kEndedListed stay listed as ended.
  void retire(long tid);
  // Updates the record of the live thread tid (re-pinned); false if there is none.
  bool update(const ThreadRecord& r);
  // Live threads in creation order, then the listed ended ones.
  std::vector<ThreadRecord> snapshot() const;
  std::vector<ThreadRecord> live() const;
  // Ended threads in all, and those of them not listed.
  size_t ended() const;
  size_t ended_unlisted() const;
  // The live thread with this tid, if any (for re-pinning).
  bool find(long tid, ThreadRecord* out) const;

  const Plan& plan() const;
  unsigned generation() const;

 private:
  struct Layout;
  Layout* layout_make(const Plan& plan, PinMode pin, unsigned generation);
  // creator_pool's next core in l (wrap: the pool is taken mod l's pools).
  static Assignment assign_in(Layout* l, int pool, bool wrap);
  std::atomic<Layout*> layout_{nullptr};
  mutable std::mutex mu_;
  std::vector<ThreadRecord> threads_;  // live
  std::vector<ThreadRecord> ended_;    // the first kEndedListed ended
  size_t ended_total_ = 0;
};

}  // namespace pw::gov
