// hooks/creator: attribution of new threads to libraries, via libunwind.
#include "hooks/creator.h"

#include <dlfcn.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "hooks/real.h"

namespace pw::hooks {
namespace {

// libunwind's local-unwinding entry points, resolved from a private copy so
// that its _Unwind_* never replace the host's exception unwinder.
struct Unwind {
  int (*getcontext)(unw_context_t*) = nullptr;
  int (*init_local)(unw_cursor_t*, unw_context_t*) = nullptr;
  int (*step)(unw_cursor_t*) = nullptr;
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*) = nullptr;
  bool ok = false;
};

const Unwind& unwind() {
  static Unwind u;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
    if (!h) return;
    u.getcontext = reinterpret_cast<int (*)(unw_context_t*)>(dlsym(h, "_Ux86_64_getcontext"));
    u.init_local =
        reinterpret_cast<int (*)(unw_cursor_t*, unw_context_t*)>(dlsym(h, "_ULx86_64_init_local"));
    u.step = reinterpret_cast<int (*)(unw_cursor_t*)>(dlsym(h, "_ULx86_64_step"));
    u.get_reg = reinterpret_cast<int (*)(unw_cursor_t*, unw_regnum_t, unw_word_t*)>(
        dlsym(h, "_ULx86_64_get_reg"));
    u.ok = u.getcontext && u.init_local && u.step && u.get_reg;
  });
  return u;
}

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
  const std::string lib = short_name(object_name_of(caller_pc), program_invocation_short_name);
  if (!is_wrapper(lib)) return lib;
  std::string who = lib.rfind("libstdc++", 0) == 0 ? "std::thread (" + lib + ")" : lib;
  const Unwind& u = unwind();
  if (!u.ok) return who;
  unw_context_t ctx;
  unw_cursor_t cur;
  if (u.getcontext(&ctx) != 0 || u.init_local(&cur, &ctx) != 0) return who;
  // Skip our own frames and the wrapper's; the first frame elsewhere is the caller.
  for (int depth = 0; depth < 16 && u.step(&cur) > 0; ++depth) {
    unw_word_t ip = 0;
    if (u.get_reg(&cur, UNW_REG_IP, &ip) != 0) break;
    const void* pc = reinterpret_cast<const void*>(ip - 1);
    if (is_self(pc)) continue;
    const std::string l = short_name(object_name_of(pc), program_invocation_short_name);
    if (is_wrapper(l)) continue;
    return who + " from " + l;
  }
  return who;
}

}  // namespace pw::hooks
