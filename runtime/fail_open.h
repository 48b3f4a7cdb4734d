// runtime/fail_open: the one boundary between parwidth's own work inside a host's
// process (a hook, the monitor thread, the exit path) and the host. Whatever that
// work throws (in practice: running out of memory) stops here, says why once per
// key (fail_open_note: a warning, kept for the report), and the host goes on as it
// asked. scripts/lint refuses a `catch (...)` in hooks/, preload/, runtime/ and core/
// that neither logs nor rethrows.
#pragma once

#include <exception>

#include "runtime/api.h"

namespace pw::rt {

// Runs f(). False if it threw (the caller then undoes what it began, and
// lets the host's call go on as the host asked).
template <typename F>
bool fail_open(const char* key, F&& f) noexcept {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    fail_open_note(key, e.what());
  } catch (...) {
    fail_open_note(key, "an exception that is not a std::exception");
  }
  return false;
}

}  // namespace pw::rt
