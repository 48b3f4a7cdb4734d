// counters/fd: keep our descriptors off the host's standard streams.
#pragma once

#include <fcntl.h>
#include <unistd.h>

namespace pw::counters {

// A host that runs with stdin/stdout/stderr closed relies on writes to them
// failing; a descriptor of ours that took fd 0-2 would take its output. Moves
// fd to 3 or above (close-on-exec); returns the descriptor to use, -1 on error.
inline int fd_above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

}  // namespace pw::counters
