// hooks/exit: _exit writes the report too. A process that ends with _exit
// runs no destructors, and forked workers end that way (Python's
// multiprocessing, so every PyTorch DataLoader worker, calls os._exit); without
// this they would be governed but never reported.
//
// A vfork()ed child shares its parent's memory and runs no fork handlers: it
// must not touch our state. It is recognised by its pid, which differs from
// the one recorded at load and in the fork handler.
#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "hooks/slots.h"
#include "preload/runtime.h"

namespace pw::hooks {
namespace {

std::atomic<pid_t> g_pid{0};

void note_pid() {
  g_pid.store(getpid(), std::memory_order_relaxed);
}

__attribute__((constructor)) void exit_load() {
  note_pid();
  pthread_atfork(nullptr, nullptr, note_pid);
}

}  // namespace
}  // namespace pw::hooks

PW_HOOK(void, _exit, (int status)) {
  auto real = PW_REAL(_exit);
  if (pw::rt::selected() && pw::hooks::g_pid.load(std::memory_order_relaxed) == getpid()) {
    try {
      pw::rt::on_exit();
    } catch (...) {
    }
  }
  if (real) real(status);
  for (;;) pause();  // unreachable: _exit does not return
}
