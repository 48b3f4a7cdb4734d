// hooks/creator: attribution of new threads to libraries, by walking the stack.
#include "hooks/creator.h"

#include <unwind.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "hooks/fail_open.h"
#include "hooks/real.h"

namespace pw::hooks {
namespace {

// The stack walk uses the unwinder linked into this library (libgcc's,
// static and hidden): no dlopen inside pthread_create, whose caller may be a
// thread waiting on the loader's lock held by another thread that waits for it
// (a library constructor that starts a thread and joins it).
struct Walk {
  const char* program;
  int depth = 0;
  std::string found;
};

std::string short_name(const char* obj, const char* program) {
  if (!obj) return "unknown";
  if (!*obj) return program;  // the main executable
  const char* s = strrchr(obj, '/');
  return s ? s + 1 : obj;
}

// Libraries that create threads on someone else's behalf.
bool is_wrapper(const std::string& lib) {
  return lib.rfind("libstdc++", 0) == 0 || lib.rfind("libc.so", 0) == 0 ||
         lib.rfind("libc++", 0) == 0 || lib.rfind("libpthread", 0) == 0;
}

}  // namespace

std::string creator_of(const void* caller_pc) {
  std::string lib = short_name(object_name_of(caller_pc), program_invocation_short_name);
  if (!is_wrapper(lib)) return lib;
  std::string who = lib.rfind("libstdc++", 0) == 0 ? "std::thread (" + lib + ")" : lib;
  Walk w{program_invocation_short_name, 0, {}};
  // Skip our own frames and the wrapper's; the first frame elsewhere is the caller.
  _Unwind_Backtrace(
      [](struct _Unwind_Context* ctx, void* data) -> _Unwind_Reason_Code {
        Walk* walk = static_cast<Walk*>(data);
        if (++walk->depth > 24) return _URC_END_OF_STACK;
        const uintptr_t ip = _Unwind_GetIP(ctx);
        if (ip == 0) return _URC_END_OF_STACK;
        const void* pc = reinterpret_cast<const void*>(ip - 1);
        if (is_self(pc)) return _URC_NO_REASON;
        bool wrapper = false;
        fail_open("thread-creator", [&] {
          std::string l = short_name(object_name_of(pc), walk->program);
          wrapper = is_wrapper(l);
          if (!wrapper) walk->found = std::move(l);
        });
        return wrapper ? _URC_NO_REASON : _URC_END_OF_STACK;
      },
      &w);
  if (!w.found.empty()) return who + " from " + w.found;
  return who;
}

}  // namespace pw::hooks
