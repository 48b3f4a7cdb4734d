// counters/proc.cpp: per-thread scheduling state from /proc/self/task, without allocating.
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "counters/counters.h"

namespace pw::counters {
namespace {

// Reads a whole small /proc file relative to dirfd into buf (NUL-terminated). Returns the length,
// or -1 (the thread exited, or the file does not exist).
ssize_t read_at(int dirfd, const char* path, char* buf, size_t cap) {
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
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

const char* parse_u64(const char* p, uint64_t* v) {
  while (*p == ' ' || *p == '\t') ++p;
  uint64_t x = 0;
  const char* start = p;
  while (*p >= '0' && *p <= '9') x = x * 10 + static_cast<uint64_t>(*p++ - '0');
  *v = x;
  return p == start ? nullptr : p;
}

// Value text of "Key:\t..." in a status buffer, or nullptr.
const char* status_field(const char* buf, const char* key) {
  size_t klen = strlen(key);
  for (const char* line = buf; line && *line;) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') return line + klen + 1;
    line = strchr(line, '\n');
    if (line) ++line;
  }
  return nullptr;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "Cpus_allowed:\tff,ffffffff": hex, most significant group first, so walk it backwards.
bool parse_mask(const char* p, cpu_set_t* set) {
  CPU_ZERO(set);
  while (*p == ' ' || *p == '\t') ++p;
  const char* end = p;
  while (*end && *end != '\n') ++end;
  size_t bit = 0;
  bool any = false;
  for (const char* q = end; q > p;) {
    int d = hex_digit(*--q);
    if (*q == ',') continue;
    if (d < 0) return false;
    for (int b = 0; b < 4; ++b, ++bit) {
      if ((d >> b) & 1 && bit < CPU_SETSIZE) CPU_SET(bit, set);
    }
    any = true;
  }
  return any;
}

// Field 39 of stat (processor). The comm field may hold spaces and ')', so count from the last ')'.
int parse_stat_cpu(const char* buf) {
  const char* p = strrchr(buf, ')');
  if (!p) return -1;
  p += 1;
  for (int field = 3; field < 39; ++field) {
    p = strchr(p + 1, ' ');
    if (!p) return -1;
  }
  uint64_t v = 0;
  return parse_u64(p, &v) ? static_cast<int>(v) : -1;
}

bool read_thread(int taskfd, pid_t tid, bool detail, ThreadStat* t) {
  char path[48];
  char buf[4096];
  t->tid = tid;
  snprintf(path, sizeof path, "%d/schedstat", static_cast<int>(tid));
  if (read_at(taskfd, path, buf, sizeof buf) <= 0) return false;
  const char* p = parse_u64(buf, &t->run_ns);
  if (!p || !parse_u64(p, &t->wait_ns)) return false;

  snprintf(path, sizeof path, "%d/status", static_cast<int>(tid));
  if (read_at(taskfd, path, buf, sizeof buf) <= 0) return false;
  const char* v = status_field(buf, "nonvoluntary_ctxt_switches");
  if (!v || !parse_u64(v, &t->invol_switches)) t->invol_switches = 0;
  t->have_allowed = false;
  t->cpu = -1;
  if (!detail) return true;
  v = status_field(buf, "Cpus_allowed");
  t->have_allowed = v && parse_mask(v, &t->allowed);

  snprintf(path, sizeof path, "%d/stat", static_cast<int>(tid));
  if (read_at(taskfd, path, buf, sizeof buf) > 0) t->cpu = parse_stat_cpu(buf);
  return true;
}

}  // namespace

Status proc_read_threads(const ProcReadOptions& opt, ThreadStat* out, size_t cap, size_t* n,
                         size_t* total) {
  if ((!out && cap) || !n || !total) return Status::kError;
  int taskfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (taskfd < 0) return Status::kUnsupported;
  size_t got = 0, seen = 0;
  bool any_schedstat = false;
  alignas(8) char dents[8192];
  for (;;) {
    long r = syscall(SYS_getdents64, taskfd, dents, sizeof dents);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    for (long off = 0; off < r;) {
      auto* d = reinterpret_cast<struct dirent64*>(dents + off);
      off += d->d_reclen;
      uint64_t tid = 0;
      const char* e = parse_u64(d->d_name, &tid);
      if (!e || *e != '\0' || tid == 0) continue;  // "." and ".."
      if (static_cast<pid_t>(tid) == opt.skip_tid) continue;
      ++seen;
      if (got >= cap) continue;
      if (read_thread(taskfd, static_cast<pid_t>(tid), opt.detail, &out[got])) {
        any_schedstat = true;
        ++got;
      }
    }
  }
  close(taskfd);
  // Our own thread always exists: no schedstat for any thread means the kernel lacks it.
  if (!any_schedstat && seen > 0 && cap > 0) return Status::kUnsupported;
  *n = got;
  *total = seen;
  return Status::kOk;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kUnsupported: return "unsupported";
    case Status::kError: return "error";
    case Status::kBusy: return "busy";
    case Status::kPending: return "pending";
  }
  return "?";
}

}  // namespace pw::counters
