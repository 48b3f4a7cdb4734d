// runtime/threads: each governed thread's pool and core, its pin, and the move of
// pinned threads to a new plan.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "runtime/fail_open.h"
#include "runtime/state.h"
#include "topology/affinity.h"

namespace pw::rt {

// A governed thread exited: its pin is checked while it still runs here (a
// thread-specific destructor runs on the exiting thread; hooks/pthread.cpp's
// own check may come after this one), then its record leaves the live ones.
void thread_ended(void* tid) {
  if (!g || g->pid.load(std::memory_order_relaxed) != getpid()) return;
  fail_open("thread-end", [tid] {
    own_pin_check();
    g->threads.retire(reinterpret_cast<long>(tid));
  });
}

namespace {

// Moves one pinned thread (its record *t; `tid` 0 for the calling thread) to
// the plan in force, its core from the plan's own hand-out (the thread table's
// counters, so that threads created later take the cores that come next), and
// updates its record. Called with repin_mu held.
bool thread_move_to_plan(Runtime& r, gov::ThreadRecord* t, long tid) {
  const gov::Assignment a = r.threads.reassign(t->pool >= 0 ? t->pool : 0);
  std::vector<int> cpus;
  if (!cpus_for(a, &cpus) || !topo::affinity_set(static_cast<pid_t>(tid), cpus) == 0) return false;
  t->pool = a.pool;
  t->cpu = a.cpu;
  t->generation = a.generation;
  r.threads.update(*t);
  return true;
}

}  // namespace

// Moves the threads we pinned onto the plan in force: pool p -> p mod pools,
// each on its pool's next core in creation order. Threads that exited are
// skipped; threads pinned by their creator are not ours to move. A thread that
// took its core from the old plan but is recorded only after this read the
// records moves itself (thread_catch_up).
int repin_threads(Runtime& r) {
  if (r.opt.pin == gov::PinMode::kNone) return 0;
  std::lock_guard<std::mutex> lock(r.repin_mu);
  int moved = 0;
  for (gov::ThreadRecord t : r.threads.live())
    if (t.pinned && thread_move_to_plan(r, &t, t.tid)) ++moved;
  return moved;
}

namespace {

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

}  // namespace

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
    if (access(path, F_OK) != 0 || !topo::affinity_get(static_cast<pid_t>(t.tid), &now) == 0)
      continue;
    pin_moved(&t, now);
  }
}

int current_pool() {
  return t_pool;
}
void current_pool_set(int pool) {
  t_pool = pool;
}

gov::Assignment thread_assign(int creator_pool) {
  return g->threads.assign(creator_pool);
}
void thread_record(const gov::ThreadRecord& r) {
  g->threads.record(r);
  // Told when the thread exits (returns, pthread_exit, cancellation).
  if (g->thread_key_made) pthread_setspecific(g->thread_key, reinterpret_cast<void*>(r.tid));
}

bool thread_catch_up(long tid, unsigned generation) {
  // The common case, no plan since the thread took its core: one atomic load.
  if (!g || g->threads.generation() == generation) return false;
  Runtime& r = *g;
  bool moved = false;
  fail_open("thread-catch-up", [&] {
    // Recorded before repin_threads read the records, the thread was moved
    // there (its record has the new generation); recorded after, it was not
    // seen and moves itself now. The lock orders the two.
    std::lock_guard<std::mutex> lock(r.repin_mu);
    gov::ThreadRecord t;
    if (!r.threads.find(tid, &t) || !t.pinned || t.generation == r.threads.generation() ||
        !thread_move_to_plan(r, &t, 0))
      return;
    t_pool = t.pool;
    moved = true;
  });
  return moved;
}
gov::PinMode pin_mode() {
  return g->opt.pin;
}

void own_pin_check() {
  if (!g || g->state.load(std::memory_order_acquire) != kActive || own_pid() != getpid()) return;
  gov::ThreadRecord t;
  std::vector<int> now;
  if (!g->threads.find(static_cast<long>(gettid()), &t) || !t.pinned ||
      !topo::affinity_get(0, &now) == 0)
    return;
  if (pin_moved(&t, now)) g->threads.update(t);
}

bool cpus_for(const gov::Assignment& a, std::vector<int>* cpus) {
  if (g->opt.pin == gov::PinMode::kNone) return false;
  // The table's plan: immutable once published (the node registry and
  // graph_adopt replace it while threads are being created).
  return gov::assignment_cpus(g->threads.plan(), a, cpus);
}

}  // namespace pw::rt
