// hooks/spawn: posix_spawn. The child inherits the calling thread's mask
// (posix_spawn runs no fork handlers): a pinned pool thread would hand it one
// core, and a process confined to its share would hand a launcher's ranks that
// share before they plan their own. The thread takes the child's mask
// (rt::spawn_cpus) for the spawn and goes back after.
#include <sched.h>
#include <spawn.h>
#include <unistd.h>

#include "hooks/guard.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

class WidenForSpawn {
 public:
  explicit WidenForSpawn(char* const envp[]) {
    if (!rt::selected() || !rt::governing()) return;
    try {
      cpu_set_t wide;
      CPU_ZERO(&wide);
      for (int c : rt::spawn_cpus(envp ? envp : environ))
        if (c < CPU_SETSIZE) CPU_SET(c, &wide);
      CPU_ZERO(&saved_);
      if (CPU_COUNT(&wide) == 0 || sched_getaffinity(0, sizeof saved_, &saved_) != 0 ||
          CPU_EQUAL(&wide, &saved_))
        return;
      if (sched_setaffinity(0, sizeof wide, &wide) == 0) restore_ = true;
    } catch (...) {
    }
  }
  ~WidenForSpawn() {
    if (restore_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  WidenForSpawn(const WidenForSpawn&) = delete;
  WidenForSpawn& operator=(const WidenForSpawn&) = delete;

 private:
  cpu_set_t saved_;
  bool restore_ = false;
};

}  // namespace
}  // namespace pw::hooks

PW_HOOK(int, posix_spawn,
        (pid_t * pid, const char* path, const posix_spawn_file_actions_t* actions,
         const posix_spawnattr_t* attr, char* const argv[], char* const envp[])) {
  pw::hooks::WidenForSpawn widen(envp);
  return PW_REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
}

PW_HOOK(int, posix_spawnp,
        (pid_t * pid, const char* file, const posix_spawn_file_actions_t* actions,
         const posix_spawnattr_t* attr, char* const argv[], char* const envp[])) {
  pw::hooks::WidenForSpawn widen(envp);
  return PW_REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
}
