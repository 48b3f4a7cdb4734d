// governor/thread_table: pool and core assignment for new threads.
#include "governor/thread_table.h"

#include <cstddef>
#include <cstring>
#include <utility>

namespace pw::gov {

bool thread_is_pool(const std::string& creator) {
  // A wrapper's thread (std::thread, thrd_create) is its caller's: "... from <library>".
  const size_t from = creator.rfind(" from ");
  const std::string lib = from == std::string::npos ? creator : creator.substr(from + 6);
  static const char* const kRuntimes[] = {"libgomp",
                                          "libomp",
                                          "libiomp",
                                          "libonnxruntime",
                                          "onnxruntime_pybind11_state",
                                          "libtorch",
                                          "libc10",
                                          "libtensorflow",
                                          "_pywrap_tensorflow",
                                          "libopenblas",
                                          "libblis",
                                          "libmkl",
                                          "libdnnl",
                                          "libtbb"};
  for (const char* r : kRuntimes)
    if (lib.compare(0, strlen(r), r) == 0) return true;
  return false;
}

struct ThreadTable::Layout {
  Plan plan;
  PinMode pin = PinMode::kCore;
  unsigned generation = 0;
  std::atomic<unsigned> next_root{0};
  std::unique_ptr<std::atomic<unsigned>[]> next_in_pool;
};

ThreadTable::ThreadTable() {
  layout_.store(layout_make(Plan(), PinMode::kNone, 0));
}

ThreadTable::Layout* ThreadTable::layout_make(const Plan& plan, PinMode pin, unsigned generation) {
  Layout* l = new Layout();
  l->plan = plan;
  l->pin = pin;
  l->generation = generation;
  const size_t n = plan.core_sets.size();
  l->next_in_pool.reset(new std::atomic<unsigned>[n == 0 ? 1 : n]);
  for (size_t i = 0; i < n; ++i) l->next_in_pool[i].store(i == 0 ? 1 : 0);
  return l;
}

void ThreadTable::reset(const Plan& plan, PinMode pin) {
  const unsigned gen = layout_.load(std::memory_order_acquire)->generation + 1;
  layout_.store(layout_make(plan, pin, gen), std::memory_order_release);
  std::lock_guard<std::mutex> lock(mu_);
  threads_.clear();
  ended_.clear();
  ended_total_ = 0;
}

unsigned ThreadTable::replan(const Plan& plan) {
  return replan(plan, layout_.load(std::memory_order_acquire)->pin);
}

unsigned ThreadTable::replan(const Plan& plan, PinMode pin) {
  Layout* old = layout_.load(std::memory_order_acquire);
  Layout* l = layout_make(plan, pin, old->generation + 1);
  layout_.store(l, std::memory_order_release);
  return l->generation;
}

PinMode ThreadTable::pin() const {
  return layout_.load(std::memory_order_acquire)->pin;
}

Assignment ThreadTable::assign_in(Layout* l, int pool, bool wrap) {
  Assignment a;
  a.generation = l->generation;
  const int pools = static_cast<int>(l->plan.core_sets.size());
  if (pools == 0) return a;
  if (wrap && pool >= 0) pool %= pools;
  if (pool >= 0 && pool < pools) {
    a.pool = pool;
  } else {
    a.pool = static_cast<int>(l->next_root.fetch_add(1, std::memory_order_relaxed) % pools);
  }
  const std::vector<int>& set = l->plan.core_sets[a.pool];
  // A plan on cores shared with other members pins to the pool's set: the
  // kernel balances the members' threads over it (governor/node_share.h).
  if (l->pin == PinMode::kCore && !l->plan.shared && !set.empty()) {
    const unsigned k = l->next_in_pool[a.pool].fetch_add(1, std::memory_order_relaxed);
    a.cpu = set[k % set.size()];
  }
  return a;
}

Assignment ThreadTable::assign(int creator_pool) {
  return assign_in(layout_.load(std::memory_order_acquire), creator_pool, false);
}

Assignment ThreadTable::reassign(int pool) {
  return assign_in(layout_.load(std::memory_order_acquire), pool, true);
}

const Plan& ThreadTable::plan() const {
  return layout_.load(std::memory_order_acquire)->plan;
}
unsigned ThreadTable::generation() const {
  return layout_.load(std::memory_order_acquire)->generation;
}

void ThreadTable::record(const ThreadRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  threads_.push_back(r);
}

bool ThreadTable::update(const ThreadRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  // The last record of a tid: an earlier one belongs to an exited thread.
  for (auto t = threads_.rbegin(); t != threads_.rend(); ++t) {
    if (t->tid == r.tid) {
      *t = r;
      return true;
    }
  }
  return false;
}

void ThreadTable::retire(long tid) {
  std::lock_guard<std::mutex> lock(mu_);
  // Short-lived threads end soon after they were recorded: search from the back.
  for (size_t i = threads_.size(); i-- > 0;) {
    if (threads_[i].tid != tid) continue;
    ++ended_total_;
    if (ended_.size() < kEndedListed) {
      ended_.push_back(std::move(threads_[i]));
      ended_.back().ended = true;
    }
    threads_.erase(threads_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

std::vector<ThreadRecord> ThreadTable::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ThreadRecord> all = threads_;
  all.insert(all.end(), ended_.begin(), ended_.end());
  return all;
}

std::vector<ThreadRecord> ThreadTable::live() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_;
}

size_t ThreadTable::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_total_;
}

size_t ThreadTable::ended_unlisted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_total_ - ended_.size();
}

bool ThreadTable::find(long tid, ThreadRecord* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto r = threads_.rbegin(); r != threads_.rend(); ++r) {
    if (r->tid == tid) {
      *out = *r;
      return true;
    }
  }
  return false;
}

bool assignment_cpus(const Plan& plan, const Assignment& a, std::vector<int>* cpus) {
  if (a.pool < 0) return false;
  if (a.cpu >= 0) {
    cpus->assign(1, a.cpu);
    return true;
  }
  if (a.pool >= static_cast<int>(plan.core_sets.size()) || plan.core_sets[a.pool].empty())
    return false;
  *cpus = plan.core_sets[a.pool];
  return true;
}

}  // namespace pw::gov
