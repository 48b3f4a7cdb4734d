// counters/proc.cpp: per-thread scheduling state from /proc/self/task, without allocating.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "counters/counters.h"
#include "counters/fd.h"
#include "counters/task_dir.h"

namespace pw::counters {
namespace {

// Reads a whole small /proc file relative to dirfd into buf (NUL-terminated). Returns the length,
// or -1 (the thread exited, or the file does not exist).
ssize_t fd_read_at(int dirfd, const char* path, char* buf, size_t cap) {
  int fd = fd_above_stdio(openat(dirfd, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return -1;
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t r = read(fd, buf + len, cap - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += static_cast<size_t>(r);
  }
  close(fd);
  buf[len] = '\0';
  return static_cast<ssize_t>(len);
}

const char* u64_parse(const char* p, uint64_t* v) {
  while (*p == ' ' || *p == '\t') ++p;
  uint64_t x = 0;
  const char* start = p;
  while (*p >= '0' && *p <= '9') x = x * 10 + static_cast<uint64_t>(*p++ - '0');
  *v = x;
  return p == start ? nullptr : p;
}

// Field 39 of stat (processor). The comm field may hold spaces and ')', so count from the last ')'.
int stat_cpu_parse(const char* buf) {
  const char* p = strrchr(buf, ')');
  if (!p) return -1;
  p += 1;
  for (int field = 3; field < 39; ++field) {
    p = strchr(p + 1, ' ');
    if (!p) return -1;
  }
  uint64_t v = 0;
  return u64_parse(p, &v) ? static_cast<int>(v) : -1;
}

bool thread_read(int taskfd, pid_t tid, bool detail, ThreadStat* t) {
  char path[48];
  char buf[1024];
  t->tid = tid;
  t->have_allowed = false;
  t->cpu = -1;
  snprintf(path, sizeof path, "%d/schedstat", static_cast<int>(tid));
  if (fd_read_at(taskfd, path, buf, sizeof buf) <= 0) return false;
  const char* p = u64_parse(buf, &t->run_ns);
  if (!p || !u64_parse(p, &t->wait_ns)) return false;
  if (!detail) return true;
  // sched_getaffinity(tid) is a tenth of the cost of parsing Cpus_allowed out of status.
  t->have_allowed = sched_getaffinity(tid, sizeof t->allowed, &t->allowed) == 0;
  snprintf(path, sizeof path, "%d/stat", static_cast<int>(tid));
  if (fd_read_at(taskfd, path, buf, sizeof buf) > 0) t->cpu = stat_cpu_parse(buf);
  return true;
}

// The previous read of tid, or nullptr.
const ThreadStat* previous(const ProcReadOptions& opt, pid_t tid) {
  size_t lo = 0, hi = opt.n_prev;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (opt.prev[mid].tid < tid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < opt.n_prev && opt.prev[lo].tid == tid ? &opt.prev[lo] : nullptr;
}

// After k unchanged reads a thread is read every 2^min(3k, 6)-th call: 8,
// then 64 (an idle thread that wakes is caught sooner by the sampler's check
// of CPU time the threads read do not account for).
constexpr uint8_t kMaxIdle = 2;
unsigned idle_interval(uint8_t idle) {
  return 1u << (3u * idle < 6u ? 3u * idle : 6u);
}

}  // namespace

namespace {

// Calls f(line) for each line of a /proc file (NUL-terminated, without its
// newline; longer lines than the buffer are cut), up to `limit` bytes.
template <typename F>
void proc_lines(const char* path, size_t limit, F&& f) {
  const int fd = fd_above_stdio(open(path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return;
  char buf[8192];
  size_t have = 0, total = 0;
  for (;;) {
    const ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    have += static_cast<size_t>(r);
    total += static_cast<size_t>(r);
    size_t start = 0;
    for (size_t i = 0; i < have; ++i) {
      if (buf[i] != '\n') continue;
      buf[i] = '\0';
      f(buf + start);
      start = i + 1;
    }
    if (start == 0 && have == sizeof buf - 1) {  // one line longer than the buffer
      buf[have] = '\0';
      f(buf);
      start = have;
    }
    memmove(buf, buf + start, have - start);
    have -= start;
    if (total >= limit) break;
  }
  close(fd);
}

// The n-th whitespace-separated field of line (0-based), or nullptr.
const char* field(const char* p, int n) {
  for (int i = 0;; ++i) {
    while (*p == ' ' || *p == '\t') ++p;
    if (!*p) return nullptr;
    if (i == n) return p;
    while (*p && *p != ' ' && *p != '\t') ++p;
  }
}

}  // namespace

Status process_listens(bool* out) {
  if (!out) return Status::kError;
  const int fdd = fd_above_stdio(open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fdd < 0) return Status::kUnsupported;
  uint64_t inodes[64];
  size_t n = 0;
  task_dir_each(fdd, [&](const char* name) {
    if (n == sizeof inodes / sizeof inodes[0]) return;
    char link[64];
    const ssize_t len = readlinkat(fdd, name, link, sizeof link - 1);
    if (len <= 8) return;
    link[len] = '\0';
    uint64_t ino = 0;
    if (strncmp(link, "socket:[", 8) == 0 && u64_parse(link + 8, &ino)) inodes[n++] = ino;
  });
  close(fdd);
  bool listens = false;
  auto ours = [&](const char* p) {
    uint64_t ino = 0;
    if (!p || !u64_parse(p, &ino)) return false;
    for (size_t i = 0; i < n; ++i)
      if (inodes[i] == ino) return true;
    return false;
  };
  const size_t kLimit = 4u << 20;
  for (const char* path : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    if (listens || n == 0) break;
    // "sl local rem st ... uid timeout inode": st 0A is LISTEN.
    proc_lines(path, kLimit, [&](const char* line) {
      const char* st = field(line, 3);
      listens = listens || (st && strncmp(st, "0A ", 3) == 0 && ours(field(line, 9)));
    });
  }
  if (!listens && n > 0) {
    // "Num RefCount Protocol Flags Type St Inode Path": flag 00010000 accepts connections.
    proc_lines("/proc/self/net/unix", kLimit, [&](const char* line) {
      const char* flags = field(line, 3);
      listens = listens || (flags && strncmp(flags, "00010000 ", 9) == 0 && ours(field(line, 6)));
    });
  }
  *out = listens;
  return Status::kOk;
}

Status thread_waits_for_events(pid_t tid, bool* out) {
  if (!out) return Status::kError;
  char path[64];
  char buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", static_cast<int>(tid));
  if (fd_read_at(AT_FDCWD, path, buf, sizeof buf) <= 0) return Status::kUnsupported;
  // "running" while on a CPU, "-1 ..." outside a system call, else the number first.
  uint64_t nr = 0;
  if (buf[0] < '0' || buf[0] > '9' || !u64_parse(buf, &nr)) {
    *out = false;
    return Status::kOk;
  }
  const long waits[] = {
#ifdef SYS_epoll_wait
      SYS_epoll_wait,
#endif
#ifdef SYS_poll
      SYS_poll,
#endif
#ifdef SYS_select
      SYS_select,
#endif
#ifdef SYS_epoll_pwait2
      SYS_epoll_pwait2,
#endif
      SYS_epoll_pwait,  SYS_ppoll, SYS_pselect6};
  *out = false;
  for (long w : waits) *out = *out || static_cast<long>(nr) == w;
  return Status::kOk;
}

Status proc_read_threads(const ProcReadOptions& opt, ThreadStat* out, size_t cap, size_t* n,
                         size_t* total, size_t* read) {
  if ((!out && cap) || !n || !total) return Status::kError;
  int taskfd = fd_above_stdio(open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (taskfd < 0) return Status::kUnsupported;
  size_t got = 0, seen = 0, reads = 0;
  bool any_schedstat = false;
  task_dir_each(taskfd, [&](const char* name) {
    uint64_t tid = 0;
    const char* e = u64_parse(name, &tid);
    if (!e || *e != '\0' || tid == 0) return;
    if (static_cast<pid_t>(tid) == opt.skip_tid) return;
    ++seen;
    if (got >= cap) return;
    const ThreadStat* p = opt.prev ? previous(opt, static_cast<pid_t>(tid)) : nullptr;
    // Spread over calls by tid, so that idle threads do not all come due at once.
    if (p && p->idle > 0 && !opt.read_all && (opt.round + tid) % idle_interval(p->idle) != 0) {
      out[got] = *p;
      out[got].carried = true;
      out[got].have_allowed = false;
      out[got].cpu = -1;
      any_schedstat = true;
      ++got;
      return;
    }
    ++reads;
    if (thread_read(taskfd, static_cast<pid_t>(tid), opt.detail, &out[got])) {
      ThreadStat& t = out[got];
      t.carried = false;
      t.idle = 0;
      if (p && p->run_ns == t.run_ns && p->wait_ns == t.wait_ns)
        t.idle = p->idle < kMaxIdle ? static_cast<uint8_t>(p->idle + 1) : kMaxIdle;
      any_schedstat = true;
      ++got;
    }
  });
  close(taskfd);
  // Our own thread always exists: no schedstat for any thread means the kernel lacks it.
  if (!any_schedstat && seen > 0 && cap > 0) return Status::kUnsupported;
  *n = got;
  *total = seen;
  if (read) *read = reads;
  return Status::kOk;
}

}  // namespace pw::counters
