// core/node: the node registry's files.
#include "core/node.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pw::node {
namespace {

constexpr size_t kMaxEntry = 1 << 16;

bool fd_read(int fd, std::string* out, size_t limit) {
  out->clear();
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > limit) return false;
  }
}

bool fd_write_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t n = write(fd, s.data() + at, s.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// "<pid>.<start>" (or ".<pid>.<start>.tmp" with tmp).
bool name_parse(const char* name, bool tmp, long* pid, unsigned long long* start) {
  const char* p = name;
  if (tmp) {
    if (*p != '.') return false;
    ++p;
  }
  char* end = nullptr;
  errno = 0;
  long v = strtol(p, &end, 10);
  if (end == p || *end != '.' || v <= 0 || errno) return false;
  const char* q = end + 1;
  unsigned long long s = strtoull(q, &end, 10);
  if (end == q || errno) return false;
  if (tmp ? strcmp(end, ".tmp") != 0 : *end != '\0') return false;
  *pid = v;
  *start = s;
  return true;
}

// The process behind an entry is gone (or is another process with its pid).
bool owner_gone(long pid, unsigned long long start) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  unsigned long long now = 0;
  return proc_start_time(pid, &now) && now != start;
}

}  // namespace

std::string default_dir(const std::string& dir_opt) {
  if (!dir_opt.empty()) return dir_opt;
  const std::string uid = std::to_string(static_cast<unsigned long>(geteuid()));
  struct stat st;
  if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK | X_OK) == 0)
    return "/dev/shm/parwidth-" + uid;
  return "/tmp/parwidth-" + uid;
}

std::vector<std::string> candidate_dirs(const std::string& dir_opt) {
  std::vector<std::string> dirs{default_dir(dir_opt)};
  if (!dir_opt.empty()) return dirs;
  const char* xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/' && strlen(xdg) < 4096) dirs.push_back(std::string(xdg) + "/parwidth");
  return dirs;
}

namespace {

// A descriptor moved to 3 or above (close-on-exec): with the host's stdout
// closed, open() hands out 1, and the host's writes to stdout would land in
// our file and succeed where they should fail with EBADF.
int fd_above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

}  // namespace

bool proc_start_time(long pid, unsigned long long* out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = fd_above_stdio(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  char* p = strrchr(buf, ')');
  if (!p) return false;
  ++p;
  // Field 3 (state) is the first after ')'; starttime is field 22.
  for (int field = 3; field < 22; ++field) {
    while (*p == ' ') ++p;
    while (*p && *p != ' ') ++p;
    if (!*p) return false;
  }
  while (*p == ' ') ++p;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(p, &end, 10);
  if (end == p || errno) return false;
  *out = v;
  return true;
}

std::string entry_format(const gov::NodeMember& m) {
  std::string s = "parwidth-node 2 " + std::to_string(m.pid) + " " + std::to_string(m.start) + " ";
  for (size_t i = 0; i < m.cores.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(m.cores[i].socket) + ":" + std::to_string(m.cores[i].cpu);
  }
  s += " plan=" + std::to_string(m.pools) + "x" + std::to_string(m.threads) +
       " oversubscribed=" + std::to_string(m.oversubscribed) +
       " joined=" + std::to_string(m.joined) + " serves=" + (m.serves ? "1" : "0");
  s += '\n';
  return s;
}

namespace {

// Version 2's "key=value" fields after the cores; unknown keys are skipped
// (a later version may add some), malformed ones reject the entry.
bool fields_parse(const char* p, gov::NodeMember* m) {
  while (*p == ' ') {
    ++p;
    const char* eq = strchr(p, '=');
    if (!eq) return false;
    const std::string key(p, static_cast<size_t>(eq - p));
    p = eq + 1;
    char* end = nullptr;
    errno = 0;
    if (key == "plan") {
      const long pools = strtol(p, &end, 10);
      if (end == p || *end != 'x' || pools < 0 || pools > 1 << 20) return false;
      p = end + 1;
      const long threads = strtol(p, &end, 10);
      if (end == p || threads < 0 || threads > 1 << 20) return false;
      m->pools = static_cast<int>(pools);
      m->threads = static_cast<int>(threads);
    } else if (key == "oversubscribed") {
      const long v = strtol(p, &end, 10);
      if (end == p || v < -1 || v > 1) return false;
      m->oversubscribed = static_cast<int>(v);
    } else if (key == "joined") {
      const long long v = strtoll(p, &end, 10);
      if (end == p || v < 0 || errno) return false;
      m->joined = v;
    } else if (key == "serves") {
      if ((*p != '0' && *p != '1') || (p[1] != ' ' && p[1] != '\n' && p[1] != '\0')) return false;
      m->serves = *p == '1';
      end = const_cast<char*>(p + 1);
    } else {
      end = const_cast<char*>(p);
      while (*end && *end != ' ' && *end != '\n') ++end;
    }
    p = end;
  }
  return *p == '\0' || *p == '\n';
}

}  // namespace

bool entry_parse(const std::string& text, gov::NodeMember* out) {
  const char* p = text.c_str();
  // Version 1 (pid, start, cores) is still read: a process of an older
  // parwidth may share the node.
  static const char kV1[] = "parwidth-node 1 ";
  static const char kV2[] = "parwidth-node 2 ";
  int version = 0;
  if (strncmp(p, kV1, sizeof kV1 - 1) == 0) version = 1;
  if (strncmp(p, kV2, sizeof kV2 - 1) == 0) version = 2;
  if (!version) return false;
  p += sizeof kV1 - 1;
  gov::NodeMember m;
  char* end = nullptr;
  errno = 0;
  m.pid = strtol(p, &end, 10);
  if (end == p || *end != ' ' || m.pid <= 0) return false;
  p = end + 1;
  m.start = strtoull(p, &end, 10);
  if (end == p || *end != ' ' || errno) return false;
  p = end + 1;
  while (*p && *p != '\n' && *p != ' ') {
    gov::NodeCore c;
    long s = strtol(p, &end, 10);
    if (end == p || *end != ':' || s < 0 || s > 1 << 20) return false;
    p = end + 1;
    long cpu = strtol(p, &end, 10);
    if (end == p || cpu < 0 || cpu > 1 << 20) return false;
    c.socket = static_cast<int>(s);
    c.cpu = static_cast<int>(cpu);
    m.cores.push_back(c);
    p = end;
    if (*p == ',')
      ++p;
    else if (*p && *p != '\n' && !(version == 2 && *p == ' '))
      return false;
  }
  if (m.cores.empty()) return false;
  if (version == 2 && !fields_parse(p, &m)) return false;
  if (version == 1 && *p == ' ') return false;
  *out = std::move(m);
  return true;
}

int Registry::dir_open() const {
  int fd = fd_above_stdio(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 077) != 0) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

bool Registry::open(const std::string& dir, std::string* err) {
  dir_ = dir;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *err = "cannot create " + dir + ": " + strerror(errno);
    return false;
  }
  int fd = dir_open();
  if (fd < 0) {
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0)
      *err = dir + ": " + strerror(errno);
    else if (S_ISLNK(st.st_mode))
      *err = dir + " is a symbolic link; not used";
    else if (!S_ISDIR(st.st_mode))
      *err = dir + " is not a directory; not used";
    else if (st.st_uid != geteuid())
      *err = dir + " belongs to uid " + std::to_string(st.st_uid) +
             "; not used (name a directory of your own in PARWIDTH_NODE_DIR)";
    else {
      // The usual case: a directory made by hand with the default umask (0755).
      // The registry's entries say which processes run and what they may use:
      // only this user may read or write them.
      char mode[8];
      snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
      *err = dir + " is accessible to others (mode " + mode + "); not used: run 'chmod 700 " + dir +
             "', or name a directory that does not exist yet (parwidth creates it with " +
             "mode 700)";
    }
    return false;
  }
  close(fd);
  return true;
}

bool Registry::lock_fd_is_ours() const {
  if (lock_fd_ < 0) return false;
  struct stat st;
  return fstat(lock_fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

void Registry::lock_fd_close() {
  // The host may have closed our descriptor and reused its number: close only our file.
  if (lock_fd_is_ours()) close(lock_fd_);
  lock_fd_ = -1;
}

bool Registry::entry_write(int dirfd, std::string* err) {
  const std::string tmp = "." + name_ + ".tmp";
  int fd = -1;
  for (int attempt = 0; attempt < 2 && fd < 0; ++attempt) {
    fd = fd_above_stdio(
        openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd < 0 && errno == EEXIST) unlinkat(dirfd, tmp.c_str(), 0);  // our own earlier image's
  }
  if (fd < 0) {
    *err = "cannot create an entry in " + dir_ + ": " + strerror(errno);
    return false;
  }
  struct stat st;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 || !fd_write_all(fd, entry_format(self_)) ||
      fstat(fd, &st) != 0 || renameat(dirfd, tmp.c_str(), dirfd, name_.c_str()) != 0) {
    *err = "cannot publish an entry in " + dir_ + ": " + strerror(errno);
    unlinkat(dirfd, tmp.c_str(), 0);
    close(fd);
    return false;
  }
  lock_fd_close();
  lock_fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  published_ = true;
  return true;
}

bool Registry::publish(const gov::NodeMember& self, std::string* err) {
  self_ = self;
  name_ = std::to_string(self.pid) + "." + std::to_string(self.start);
  int dirfd = dir_open();
  if (dirfd < 0) {
    *err = "cannot open " + dir_ + ": " + strerror(errno);
    return false;
  }
  bool ok = entry_write(dirfd, err);
  close(dirfd);
  return ok;
}

namespace {

enum class Entry { kLive, kStale, kSkipped };

// Reads the entry `name` of a live-looking (pid, start). Its owner holds its
// lock for as long as it lives: a lock we can take means it died or exec'ed,
// unless the owner was rewriting it (a new plan, a new verdict) and let go of
// the old file just after renaming the new one into place: then the name is a
// new file, which is read again, so that a member is never missed for one scan
// (it would take its cores back and give them up again). kSkipped: gone
// meanwhile, not ours, not an entry, or rewritten on every try.
Entry entry_read(int dirfd, const char* name, long pid, unsigned long long start,
                 gov::NodeMember* out) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    int fd = fd_above_stdio(openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd < 0) return Entry::kSkipped;  // removed meanwhile
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
      close(fd);
      return Entry::kSkipped;
    }
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
      struct stat now;
      const bool same = fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                        now.st_ino == st.st_ino && now.st_dev == st.st_dev;
      close(fd);
      if (same) return Entry::kStale;
      continue;  // rewritten: read the new file
    }
    std::string text;
    const bool live = errno == EWOULDBLOCK && fd_read(fd, &text, kMaxEntry) &&
                      entry_parse(text, out) && out->pid == pid && out->start == start;
    close(fd);
    return live ? Entry::kLive : Entry::kSkipped;
  }
  return Entry::kSkipped;
}

}  // namespace

bool Registry::scan(ScanResult* out) {
  int dirfd = dir_open();
  if (dirfd < 0) return false;
  DIR* d = fdopendir(dirfd);
  if (!d) {
    close(dirfd);
    return false;
  }
  ScanResult r;
  r.members.push_back(self_);
  r.self = 0;
  bool self_seen = false;
  while (struct dirent* e = readdir(d)) {
    const char* name = e->d_name;
    long pid = 0;
    unsigned long long start = 0;
    if (name[0] == '.') {
      // A publisher that died between create and rename leaves its temporary file.
      if (name_parse(name, true, &pid, &start) && owner_gone(pid, start) &&
          unlinkat(dirfd, name, 0) == 0)
        ++r.reclaimed;
      continue;
    }
    if (!name_parse(name, false, &pid, &start)) continue;
    if (published_ && name_ == name) {
      struct stat st;
      self_seen = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == ino_ &&
                  st.st_dev == dev_ && lock_fd_is_ours();
      continue;
    }
    if (pid == self_.pid) {
      // Our pid with another start time: an earlier process that had our pid.
      if (start != self_.start && unlinkat(dirfd, name, 0) == 0) ++r.reclaimed;
      continue;
    }
    gov::NodeMember m;
    const Entry state =
        owner_gone(pid, start) ? Entry::kStale : entry_read(dirfd, name, pid, start, &m);
    if (state == Entry::kLive) r.members.push_back(std::move(m));
    if (state == Entry::kStale && unlinkat(dirfd, name, 0) == 0) ++r.reclaimed;
  }
  closedir(d);
  if (published_ && !self_seen) {
    // Reclaimed by someone (the host closed our descriptor, or a race with a
    // scanner): write it again.
    std::string err;
    int fd = dir_open();
    if (fd >= 0) {
      r.republished = entry_write(fd, &err);
      close(fd);
    }
  }
  *out = std::move(r);
  return true;
}

void Registry::leave() {
  if (!published_) return;
  published_ = false;
  if (self_.pid == getpid() && lock_fd_is_ours()) {
    int dirfd = dir_open();
    if (dirfd >= 0) {
      struct stat st;
      // Only our own file: a later image of this process may have replaced it.
      if (fstatat(dirfd, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == ino_ &&
          st.st_dev == dev_)
        unlinkat(dirfd, name_.c_str(), 0);
      close(dirfd);
    }
  }
  lock_fd_close();
}

void Registry::forget_after_fork() {
  published_ = false;
  lock_fd_close();
}

}  // namespace pw::node
