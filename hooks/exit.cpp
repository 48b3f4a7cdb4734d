// hooks/exit: _exit writes the report too. A process that ends with _exit
// runs no destructors, and forked workers end that way (Python's
// multiprocessing, so every PyTorch DataLoader worker, calls os._exit); without
// this they would be governed but never reported.
//
// A vfork()ed child shares its parent's memory and runs no fork handlers: it
// must not touch our state. It is recognised by its pid, which differs from
// the one recorded at load and in the fork handler (rt::own_pid).
#include <unistd.h>

#include "hooks/slots.h"
#include "preload/runtime.h"

PW_HOOK(void, _exit, (int status)) {
  auto real = PW_REAL(_exit);
  if (pw::rt::selected() && pw::rt::own_pid() == getpid()) {
    try {
      pw::rt::on_exit();
    } catch (...) {
    }
  }
  if (real) real(status);
  for (;;) pause();  // unreachable: _exit does not return
}
