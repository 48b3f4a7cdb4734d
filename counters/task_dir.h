// counters/task_dir: the threads of this process, as /proc/self/task lists them.
#pragma once

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace pw::counters {

// Calls f(name) for each thread's entry of taskfd (/proc/self/task, opened by the
// caller), in the directory's order: creation order, nearly sorted by tid. "." and
// ".." are skipped. getdents64 into a stack buffer, no allocation: the sampler reads
// threads where allocating could deadlock (counters.h).
template <typename F>
void task_dir_each(int taskfd, F&& f) {
  alignas(8) char dents[8192];
  for (;;) {
    const long r = syscall(SYS_getdents64, taskfd, dents, sizeof dents);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    for (long off = 0; off < r;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(dents + off);
      off += d->d_reclen;
      if (d->d_name[0] != '.') f(d->d_name);
    }
  }
}

}  // namespace pw::counters
