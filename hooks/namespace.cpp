// hooks/namespace: unshare and setns, which the kernel refuses (EINVAL) in a
// process with more than one thread when they change the user namespace (or,
// for setns, the mount namespace). parwidth's monitor thread must not be
// that second thread: it leaves the process for the call and comes back.
#include <errno.h>
#include <sched.h>

#include "hooks/guard.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace {

constexpr int kSingleThreadedUnshare = CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;

// nstype 0 lets the kernel take the kind from the descriptor: it may be a user namespace.
bool setns_needs_one_thread(int nstype) {
  return nstype == 0 || (nstype & (CLONE_NEWUSER | CLONE_NEWNS)) != 0;
}

}  // namespace

PW_HOOK(int, unshare, (int flags)) {
  auto real = PW_REAL(unshare);
  if (!real) {
    PW_MISSING(unshare);
    return -1;
  }
  if (!(flags & kSingleThreadedUnshare)) return real(flags);
  pw::hooks::Guard guard;  // held across: the original creates no thread
  if (guard.entered()) pw::rt::single_threaded_begin();
  const int rc = real(flags);
  const int err = errno;
  if (guard.entered()) pw::rt::single_threaded_end();
  errno = err;
  return rc;
}

PW_HOOK(int, setns, (int fd, int nstype)) {
  auto real = PW_REAL(setns);
  if (!real) {
    PW_MISSING(setns);
    return -1;
  }
  if (!setns_needs_one_thread(nstype)) return real(fd, nstype);
  pw::hooks::Guard guard;  // held across: the original creates no thread
  if (guard.entered()) pw::rt::single_threaded_begin();
  const int rc = real(fd, nstype);
  const int err = errno;
  if (guard.entered()) pw::rt::single_threaded_end();
  errno = err;
  return rc;
}
