// cli/child: runs a command in a child process and collects what it writes to stdout
// (`parwidth sweep` and `tune` time commands with it, `calibrate` reads its helper).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace pw::cli {

// Forks a child whose stdout is a pipe (and its stderr stderr_fd, when >= 0) and runs
// `exec` there: it sets the child's environment and execs; if it returns, the child
// exits with 127. Reads the pipe into *out until the child closes it or *out holds more
// than max_bytes, then waits for the child (*status as waitpid gives it). False with
// *why when no child could start.
bool child_output(const std::function<void()>& exec, int stderr_fd, size_t max_bytes,
                  std::string* out, int* status, std::string* why);

}  // namespace pw::cli
