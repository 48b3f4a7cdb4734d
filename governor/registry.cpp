// governor/registry: pool and core assignment for new threads.
#include "governor/registry.h"

namespace pw::gov {

void Registry::reset(const Plan& plan, PinMode pin) {
  plan_ = plan;
  pin_ = pin;
  next_root_.store(0, std::memory_order_relaxed);
  const size_t n = plan_.core_sets.size();
  next_in_pool_.reset(new std::atomic<unsigned>[n == 0 ? 1 : n]);
  for (size_t i = 0; i < n; ++i) next_in_pool_[i].store(i == 0 ? 1 : 0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  threads_.clear();
}

Assignment Registry::assign(int creator_pool) {
  Assignment a;
  const int pools = static_cast<int>(plan_.core_sets.size());
  if (pools == 0) return a;
  if (creator_pool >= 0 && creator_pool < pools) {
    a.pool = creator_pool;
  } else {
    a.pool = static_cast<int>(next_root_.fetch_add(1, std::memory_order_relaxed) % pools);
  }
  const std::vector<int>& set = plan_.core_sets[a.pool];
  if (pin_ == PinMode::kCore && !set.empty()) {
    const unsigned k = next_in_pool_[a.pool].fetch_add(1, std::memory_order_relaxed);
    a.cpu = set[k % set.size()];
  }
  return a;
}

void Registry::record(const ThreadRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  threads_.push_back(r);
}

std::vector<ThreadRecord> Registry::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_;
}

bool Registry::find(long tid, ThreadRecord* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ThreadRecord& r : threads_) {
    if (r.tid == tid) {
      *out = r;
      return true;
    }
  }
  return false;
}

}  // namespace pw::gov
