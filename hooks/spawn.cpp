// hooks/spawn: posix_spawn. The child inherits the calling thread's mask
// (posix_spawn runs no fork handlers): a pinned pool thread would hand it one
// core, and a process confined to its share would hand a launcher's ranks that
// share before they plan their own. The thread takes the child's mask
// (rt::spawn_cpus) for the spawn and goes back after.
#include <sched.h>
#include <spawn.h>
#include <unistd.h>

#include <vector>

#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/slots.h"
#include "runtime/api.h"
#include "topology/affinity.h"

namespace pw::hooks {
namespace {

class WidenForSpawn {
 public:
  explicit WidenForSpawn(char* const envp[]) {
    Guard guard;  // only while the child's mask is decided: the spawn itself is the host's
    if (!guard.entered() || !rt::selected() || !rt::governing()) return;
    // Fail open: the child starts on the calling thread's mask, as without us.
    fail_open("spawn-mask", [&] {
      const std::vector<int> wide = rt::spawn_cpus(envp ? envp : environ);
      if (wide.empty() || topo::affinity_get(0, &saved_) != 0 || wide == saved_) return;
      restore_ = topo::affinity_set(0, wide) == 0;
    });
  }
  ~WidenForSpawn() {
    if (restore_) topo::affinity_set(0, saved_);
  }
  WidenForSpawn(const WidenForSpawn&) = delete;
  WidenForSpawn& operator=(const WidenForSpawn&) = delete;

 private:
  std::vector<int> saved_;
  bool restore_ = false;
};

// The calling thread has a child now: the monitor reads its children too.
int spawned(int rc) {
  if (rc == 0 && rt::selected()) rt::child_started();
  return rc;
}

}  // namespace
}  // namespace pw::hooks

PW_HOOK(int, posix_spawn,
        (pid_t * pid, const char* path, const posix_spawn_file_actions_t* actions,
         const posix_spawnattr_t* attr, char* const argv[], char* const envp[])) {
  auto real = PW_REAL(posix_spawn);
  if (!real) return PW_MISSING(posix_spawn);
  pw::hooks::WidenForSpawn widen(envp);
  return pw::hooks::spawned(real(pid, path, actions, attr, argv, envp));
}

PW_HOOK(int, posix_spawnp,
        (pid_t * pid, const char* file, const posix_spawn_file_actions_t* actions,
         const posix_spawnattr_t* attr, char* const argv[], char* const envp[])) {
  auto real = PW_REAL(posix_spawnp);
  if (!real) return PW_MISSING(posix_spawnp);
  pw::hooks::WidenForSpawn widen(envp);
  return pw::hooks::spawned(real(pid, file, actions, attr, argv, envp));
}
