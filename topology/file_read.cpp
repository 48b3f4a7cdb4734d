// Small-file reads with open/read: no iostreams, errno kept apart from "not there".
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo::internal {

namespace {
// sysfs and cgroup files are a page at most; cpulists of huge machines stay well below this.
constexpr size_t kMaxFile = 1 << 20;
}  // namespace

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status file_read(const std::string& path, std::string* out, std::string* err) {
  // O_NONBLOCK: a FIFO (someone's PARWIDTH_TOPOLOGY or a planted cgroup
  // file) must not block the open, and is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return Status::kUnsupported;
    err_set(err, path + ": " + strerror(e));
    return Status::kIoError;
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    err_set(err, path + ": not a regular file");
    return Status::kIoError;
  }
  Status st = Status::kOk;
  try {
    std::string text;
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        err_set(err, path + ": " + strerror(errno));
        st = Status::kIoError;
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > kMaxFile) {
        err_set(err, path + ": larger than expected");
        st = Status::kInvalid;
        break;
      }
    }
    if (st == Status::kOk) *out = std::move(text);
  } catch (const std::bad_alloc&) {
    err_set(err, path + ": out of memory");
    st = Status::kIoError;
  }
  ::close(fd);
  return st;
}

}  // namespace pw::topo::internal
