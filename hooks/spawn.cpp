// hooks/spawn: posix_spawn from a pinned pool thread. The child would inherit
// that thread's one-core mask (posix_spawn runs no fork handlers), so the
// thread widens back to the process's CPUs for the spawn and re-pins after.
#include <sched.h>
#include <spawn.h>

#include "hooks/guard.h"
#include "hooks/slots.h"
#include "preload/runtime.h"

namespace pw::hooks {
namespace {

class WidenForSpawn {
 public:
  WidenForSpawn() {
    if (!rt::selected() || rt::current_pool() < 0 || !rt::governing()) return;
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    cpu_set_t wide;
    CPU_ZERO(&wide);
    for (int c : rt::process_cpus())
      if (c < CPU_SETSIZE) CPU_SET(c, &wide);
    if (CPU_COUNT(&wide) > 0 && sched_setaffinity(0, sizeof wide, &wide) == 0) restore_ = true;
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
  pw::hooks::WidenForSpawn widen;
  return PW_REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
}

PW_HOOK(int, posix_spawnp,
        (pid_t * pid, const char* file, const posix_spawn_file_actions_t* actions,
         const posix_spawnattr_t* attr, char* const argv[], char* const envp[])) {
  pw::hooks::WidenForSpawn widen;
  return PW_REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
}
