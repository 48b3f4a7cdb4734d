// hooks/exit: _exit, and a raise() that ends the process, write the report too,
// where they safely can.
//
// A process that ends with _exit runs no destructors, and forked workers end
// that way (Python's multiprocessing, so every PyTorch DataLoader worker,
// calls os._exit); without this they would be governed but never reported.
//
// But _exit is async-signal-safe and programs call it from signal handlers,
// where the interrupted code may hold the allocator's lock, stdio's, or ours:
// the report path (malloc, the monitor's join, file I/O) would deadlock
// there. A handler runs with its own signal blocked (unless SA_NODEFER), so
// when the calling thread has a signal blocked that has a handler installed,
// _exit may be running inside that handler: it then does nothing of ours
// and the report is not written (the registry's entry of a dead process is
// dropped by the others). Outside handlers (Python's os._exit runs from the
// interpreter loop, never from a C handler) the report is written as at exit().
//
// A server stopped with SIGTERM may end by raising the signal again with its
// default action once its own shutdown is done (uvicorn does, so that its
// exit status says how it ended): the process then dies in raise() with no
// exit handler run. Such a raise of SIGTERM, SIGINT or SIGHUP at their
// default (terminating) action, outside a signal handler, writes the report
// first and leaves the node registry, as at exit(); the signal is then
// raised as asked.
//
// A vfork()ed child shares its parent's memory and runs no fork handlers: it
// must not touch our state. It is recognised by its pid, which differs from
// the one recorded at load and in the fork handler (rt::own_pid).
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace {

// Only async-signal-safe calls (sigprocmask, sigaction).
bool maybe_in_signal_handler() {
  sigset_t blocked;
  if (sigprocmask(SIG_BLOCK, nullptr, &blocked) != 0) return true;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sigismember(&blocked, sig) != 1) continue;
    struct sigaction sa;
    if (sigaction(sig, nullptr, &sa) != 0) continue;
    if (sa.sa_flags & SA_SIGINFO) {
      if (sa.sa_sigaction) return true;
    } else if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
      return true;
    }
  }
  return false;
}

// Whether raising `sig` now ends the process by its default action: a request to stop
// (SIGTERM, SIGINT, SIGHUP) not blocked and left at SIG_DFL.
bool ends_the_process(int sig) {
  if (sig != SIGTERM && sig != SIGINT && sig != SIGHUP) return false;
  struct sigaction sa;
  sigset_t blocked;
  if (sigaction(sig, nullptr, &sa) != 0 || sigprocmask(SIG_BLOCK, nullptr, &blocked) != 0)
    return false;
  return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL && sigismember(&blocked, sig) != 1;
}

void report_before_the_end() {
  pw::hooks::Guard guard;
  if (guard.entered() && pw::rt::selected() && pw::rt::own_pid() == getpid() &&
      !maybe_in_signal_handler()) {
    pw::hooks::fail_open("exit-report", [] { pw::rt::on_exit(); });
  }
}

}  // namespace

PW_HOOK(int, raise, (int sig)) {
  auto real = PW_REAL(raise);
  if (ends_the_process(sig)) report_before_the_end();
  if (real) return real(sig);
  return PW_MISSING(raise), -1;
}

PW_HOOK(void, _exit, (int status)) {
  auto real = PW_REAL(_exit);
  report_before_the_end();
  if (real) real(status);
  PW_MISSING(_exit);
  syscall(SYS_exit_group, status);
  for (;;) pause();  // unreachable: the process has exited
}
