// hooks/hook: the one way to declare an interposed function and name the original.
//
// How to add a hook (three local edits, and its test):
//   1. In a hooks/*.cpp:   PW_HOOK(ret, name, (params...)) { ... PW_REAL(name)(args...) ... }
//      The signature is checked against the hook's declared type (hooks/abi.h
//      for names no system header declares): a wrong one does not compile.
//   2. In hooks/bind_list.h: one PW_BIND(name, glibc version or nullptr,
//      kRequired or kOptional) line.
//   3. In hooks/exports.map: the name, so the version script exports it.
// To call a host function without interposing it (TF_NewStatus, kmp_set_defaults):
// its prototype in hooks/abi.h, one PW_CALL line in hooks/call_list.h, and
// PW_REAL_AT(name, pc) where it is called. Nothing in hooks/ reaches an
// original another way (no dlsym in a hook): PW_REAL(name) is
// PW_REAL_AT(name, the hook's caller).
//
// PW_REAL(name) is always the original: for a globally visible definition it
// is bound once (RTLD_NEXT, versioned where glibc versions the symbol); for a
// name that only an RTLD_LOCAL library defines (a wheel's bundled libgomp) it
// is looked up from the caller's own object, so each caller reaches the
// runtime it would have reached without us.
//
// A missing original (nullptr: no loaded object defines it) has one policy:
// never a null call; PW_MISSING(name) says so once by name and sets errno to
// ENOSYS, and the hook fails the call as the function reports failure
// (-1 with errno, the returned error number ENOSYS, a null object); a void
// hook returns; a query returns what a program without the library would
// assume (omp_get_max_threads: 1). A call with no way to fail ends the
// process as it asked or could not go on: _exit exits through the system
// call, a C++ constructor (tsl::thread::ThreadPool) aborts.
#pragma once

#include <type_traits>

#include "hooks/real.h"

namespace pw::hooks {
// Same parameters and result; glibc marks its declarations noexcept in C++,
// which a definition may leave out, and clang keeps _exit's noreturn in its
// type: the declared pointer converts to ours exactly when only those differ.
template <typename Declared, typename Ours>
struct same_signature : std::is_convertible<Declared, Ours> {};
template <typename R, typename... A>
struct same_signature<R (*)(A...), R (*)(A...)> : std::true_type {};
template <typename R, typename... A>
struct same_signature<R (*)(A...) noexcept, R (*)(A...)> : std::true_type {};
}  // namespace pw::hooks

#define PW_HOOK_TYPE(name) pw_hook_type_##name
#define PW_REAL_SLOT(name) pw_real_##name

// Declares the slot that holds the original of `name`.
#define PW_DECLARE_REAL(name)                   \
  using PW_HOOK_TYPE(name) = decltype(&::name); \
  extern ::pw::hooks::RealSlot PW_REAL_SLOT(name)

// The original of `name` (a hook's, or a function in call_list.h), typed, as
// the object that contains `pc` would reach it (nullptr: as the global scope).
#define PW_REAL_AT(name, pc) \
  (reinterpret_cast<PW_HOOK_TYPE(name)>(::pw::hooks::real_for_caller(&PW_REAL_SLOT(name), pc)))

// The original, as seen from this call site.
#define PW_REAL(name) PW_REAL_AT(name, __builtin_return_address(0))

// The policy for a missing original (above); evaluates to ENOSYS.
#define PW_MISSING(name) (::pw::hooks::original_missing(&PW_REAL_SLOT(name)))

// Defines the exported hook. The static_assert makes the parameter list
// match the declared type exactly.
// (Attributes such as nonnull on the declared type are irrelevant to the check.)
#define PW_HOOK(ret, name, params)                                               \
  _Pragma("GCC diagnostic push")                                                 \
      _Pragma("GCC diagnostic ignored \"-Wignored-attributes\"") static_assert(  \
          ::pw::hooks::same_signature<PW_HOOK_TYPE(name), ret(*) params>::value, \
          "hook " #name " does not match the declared signature");               \
  _Pragma("GCC diagnostic pop") extern "C" __attribute__((visibility("default"))) ret name params
