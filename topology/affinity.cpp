// The process's affinity mask, sized for machines with more CPUs than cpu_set_t holds.
#include <errno.h>
#include <sched.h>
#include <string.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo {

Status affinity_read(std::vector<int>* out, std::string* err, pid_t tid) {
  // cpu_set_t has 1024 bits; the kernel refuses (EINVAL) a mask smaller than its own, so grow.
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) break;
    size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(tid, size, set) != 0) {
      int e = errno;
      CPU_FREE(set);
      if (e == EINVAL) continue;
      internal::err_set(err, std::string("sched_getaffinity: ") + strerror(e));
      return Status::kIoError;
    }
    try {
      std::vector<int> cpus;
      for (int c = 0; c < n; ++c) {
        if (CPU_ISSET_S(c, size, set)) cpus.push_back(c);
      }
      CPU_FREE(set);
      *out = std::move(cpus);
      return Status::kOk;
    } catch (const std::bad_alloc&) {
      CPU_FREE(set);
      break;
    }
  }
  internal::err_set(err, "sched_getaffinity: cannot size the CPU mask");
  return Status::kIoError;
}

}  // namespace pw::topo
