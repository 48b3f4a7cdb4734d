// governor/registry: which pool and core each new thread gets, and the record
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

#include "governor/plan.h"

namespace pw::gov {

enum class PinMode { kNone, kPool, kCore };

struct Assignment {
  int pool = -1;  // -1: not governed (no plan)
  int cpu = -1;   // the one CPU for PinMode::kCore, else -1
};

struct ThreadRecord {
  long tid = 0;
  std::string creator;  // which library asked for the thread, and who called it
  int pool = -1;
  int cpu = -1;           // pinned to this single CPU, or -1
  bool pinned = false;    // affinity was set (to cpu or to the pool's set)
  std::string pin_error;  // why pinning failed, if it did
};

class Registry {
 public:
  Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Starts over with a plan (activation, fork child): records are dropped.
  void reset(const Plan& plan, PinMode pin);
  // Follows a new plan from now on; records are kept. Returns its generation.
  unsigned replan(const Plan& plan);

  // A new thread created by a member of creator_pool (>= 0) joins that pool
  // and takes its next core; one created by a non-member (the main thread,
  // threads that existed before activation) starts the next pool round-robin.
  // The main thread counts as the first member of pool 0 (it is never pinned,
  // but it runs the first team's work), so pool 0 hands out its cores from the
  // second one.
  Assignment assign(int creator_pool);

  void record(const ThreadRecord& r);
  // Updates the record of tid (re-pinned); false if there is none.
  bool update(const ThreadRecord& r);
  std::vector<ThreadRecord> snapshot() const;
  // The recorded thread with this tid, if any (for re-pinning).
  bool find(long tid, ThreadRecord* out) const;

  const Plan& plan() const;
  PinMode pin() const;
  unsigned generation() const;

 private:
  struct Layout;
  Layout* make_layout(const Plan& plan, PinMode pin, unsigned generation);
  std::atomic<Layout*> layout_{nullptr};
  mutable std::mutex mu_;
  std::vector<ThreadRecord> threads_;
};

}  // namespace pw::gov
