// Thread CPU masks of any size (topology/affinity.h), and the process's affinity for the budget.
#include "topology/affinity.h"

#include <errno.h>
#include <string.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo {
namespace {

// A CPU_ALLOC'ed mask, freed on scope exit. `set` is null when it could not be
// made, and `error` says why (ENOMEM, or EINVAL for a list without a valid CPU).
struct Mask {
  explicit Mask(int n) { make(n); }
  explicit Mask(const std::vector<int>& cpus) {
    int max = -1;
    for (int c : cpus) max = c > max ? c : max;
    if (max < 0 || !make(max + 1)) return;
    for (int c : cpus)
      if (c >= 0) CPU_SET_S(c, size, set);
  }
  ~Mask() {
    if (set) CPU_FREE(set);
  }
  Mask(const Mask&) = delete;
  Mask& operator=(const Mask&) = delete;
  bool make(int n) {
    set = CPU_ALLOC(n);
    if (!set) {
      error = ENOMEM;
      return false;
    }
    size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    return true;
  }
  cpu_set_t* set = nullptr;
  size_t size = 0;
  int error = EINVAL;
};

}  // namespace

int affinity_get(pid_t tid, std::vector<int>* cpus) {
  // The kernel refuses (EINVAL) a mask smaller than its own, so grow from cpu_set_t's 1024.
  for (int n = CPU_SETSIZE; n <= (1 << 20); n *= 2) {
    const Mask m(n);
    if (!m.set) return ENOMEM;
    if (sched_getaffinity(tid, m.size, m.set) != 0) {
      if (errno == EINVAL) continue;
      return errno;
    }
    try {
      std::vector<int> out;
      for (int c = 0; c < n; ++c)
        if (CPU_ISSET_S(c, m.size, m.set)) out.push_back(c);
      *cpus = std::move(out);
      return 0;
    } catch (const std::bad_alloc&) {
      return ENOMEM;
    }
  }
  return EINVAL;
}

int affinity_set(pid_t tid, const std::vector<int>& cpus) {
  const Mask m(cpus);
  if (!m.set) return m.error;
  return sched_setaffinity(tid, m.size, m.set) == 0 ? 0 : errno;
}

int affinity_attr_set(pthread_attr_t* attr, const std::vector<int>& cpus) {
  const Mask m(cpus);
  if (!m.set) return m.error;
  return pthread_attr_setaffinity_np(attr, m.size, m.set);
}

int affinity_get_fixed(pid_t tid, cpu_set_t* set) noexcept {
  CPU_ZERO(set);
  return sched_getaffinity(tid, sizeof *set, set) == 0 ? 0 : errno;
}

int affinity_set_fixed(pid_t tid, const cpu_set_t& set) noexcept {
  if (CPU_COUNT(&set) == 0) return EINVAL;
  return sched_setaffinity(tid, sizeof set, &set) == 0 ? 0 : errno;
}

Status affinity_read(std::vector<int>* out, std::string* err, pid_t tid) {
  const int e = affinity_get(tid, out);
  if (e == 0) return Status::kOk;
  internal::err_set(err, e == ENOMEM || e == EINVAL
                             ? std::string("sched_getaffinity: cannot size the CPU mask")
                             : std::string("sched_getaffinity: ") + strerror(e));
  return Status::kIoError;
}

}  // namespace pw::topo
