// hooks/exec: execve and the exec functions that take an argument vector. The
// kernel keeps the calling thread's mask across exec, not why it is narrow:
// the new program would take its share of the node a second time, or (the
// calling thread a pinned pool thread) start on one core. rt::exec_prepare
// says which mask the program starts with and whether its environment names
// the share (gov::exec_share decides); a failed exec puts the mask back.
// No allocation here beyond the stack: Python's subprocess execs in a vfork
// child. The execl* forms and fexecve reach glibc's execve internally and
// pass through unchanged.
#include <alloca.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "hooks/guard.h"
#include "hooks/real.h"
#include "hooks/slots.h"
#include "runtime/api.h"
#include "topology/affinity.h"

namespace pw::hooks {
namespace {

constexpr size_t kMaxEnv = 1 << 16;

// Runs exec(envp) with the prepared mask and environment; envp == nullptr
// means the caller's environ (execv, execvp), which exec gets unchanged when
// nothing is added.
template <typename Exec>
int exec_governed(char* const envp[], Exec exec) {
  rt::ExecPrep prep;
  char* const* from = envp ? envp : environ;
  bool prepared = false;
  {
    // Left before the exec: in a vfork child this thread's flag is the
    // parent's, and a successful exec would never clear it.
    Guard guard;
    prepared = guard.entered() && rt::exec_prepare(from, &prep);
  }
  if (!prepared) return exec(envp);
  cpu_set_t saved;
  bool restore = false;
  // The allocation-free calls: this may run in a vfork child.
  if (prep.set_mask && topo::affinity_get_fixed(0, &saved) == 0 && !CPU_EQUAL(&saved, &prep.mask))
    restore = topo::affinity_set_fixed(0, prep.mask) == 0;
  char* const* use = envp;
  size_t n = 0;
  while (from && from[n]) ++n;
  if (prep.entry[0] && n < kMaxEnv) {
    const char* eq = strchr(prep.entry, '=');
    const size_t key = static_cast<size_t>(eq - prep.entry) + 1;  // "NAME="
    char** env = static_cast<char**>(alloca((n + 2) * sizeof(char*)));
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
      if (strncmp(from[i], prep.entry, key) != 0) env[k++] = from[i];
    env[k++] = prep.entry;
    env[k] = nullptr;
    use = env;
  }
  const int rc = exec(use);
  const int err = errno;
  if (restore) topo::affinity_set_fixed(0, saved);
  errno = err;
  return rc;
}

}  // namespace

void bind_exec() {
  (void)PW_REAL_AT(execve, nullptr);
  (void)PW_REAL_AT(execv, nullptr);
  (void)PW_REAL_AT(execvp, nullptr);
  (void)PW_REAL_AT(execvpe, nullptr);
}

}  // namespace pw::hooks

PW_HOOK(int, execve, (const char* path, char* const argv[], char* const envp[])) {
  auto real = PW_REAL(execve);
  if (!real) return PW_MISSING(execve), -1;
  return pw::hooks::exec_governed(envp, [&](char* const* env) { return real(path, argv, env); });
}

PW_HOOK(int, execv, (const char* path, char* const argv[])) {
  auto with_env = PW_REAL(execve);
  auto real = PW_REAL(execv);
  if (!real || !with_env) return PW_MISSING(execv), -1;
  return pw::hooks::exec_governed(nullptr, [&](char* const* env) {
    return env ? with_env(path, argv, env) : real(path, argv);
  });
}

PW_HOOK(int, execvp, (const char* file, char* const argv[])) {
  auto with_env = PW_REAL(execvpe);
  auto real = PW_REAL(execvp);
  if (!real || !with_env) return PW_MISSING(execvp), -1;
  return pw::hooks::exec_governed(nullptr, [&](char* const* env) {
    return env ? with_env(file, argv, env) : real(file, argv);
  });
}

PW_HOOK(int, execvpe, (const char* file, char* const argv[], char* const envp[])) {
  auto real = PW_REAL(execvpe);
  if (!real) return PW_MISSING(execvpe), -1;
  return pw::hooks::exec_governed(envp, [&](char* const* env) { return real(file, argv, env); });
}
