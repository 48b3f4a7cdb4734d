// cli/child: a child process with its stdout collected (cli/child.h).
#include "cli/child.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

namespace pw::cli {

bool child_output(const std::function<void()>& exec, int stderr_fd, size_t max_bytes,
                  std::string* out, int* status, std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) return *why = "pipe failed", false;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return *why = "fork failed", false;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    if (stderr_fd >= 0) dup2(stderr_fd, 2);
    close(fds[0]);
    close(fds[1]);
    exec();
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > max_bytes) break;
  }
  close(fds[0]);
  *status = 0;
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return true;
}

}  // namespace pw::cli
