// hooks/real: finding the original definition of an interposed symbol.
#pragma once

#include <pthread.h>

#include <atomic>

namespace pw::hooks {

// One per hook. `global` is the definition found through RTLD_NEXT (the
// global scope after us), bound once. When there is none, the definition is
// looked up per calling object and cached in `local`.
struct RealSlot {
  constexpr RealSlot(const char* n, const char* v, bool r) : name(n), version(v), required(r) {}
  const char* name;
  const char* version;  // glibc symbol version to ask for first, or nullptr
  bool required;        // a missing required original is reported by name
  std::atomic<void*> global{nullptr};
  std::atomic<bool> bound{false};
  static constexpr int kLocal = 8;
  std::atomic<const void*> local_obj[kLocal] = {};
  std::atomic<void*> local_fn[kLocal] = {};
};

// Binds every slot in bind_list.h (idempotent, thread-safe; cheap after the first call).
void bind_all();

// Binds the exec family's originals now (hooks/exec.cpp): their hooks run in
// vfork children, where binding on first use would enter the dynamic loader
// in memory shared with the parent.
void bind_exec();

// The original of `slot` as the caller at `caller_pc` would have reached it.
// nullptr only if no loaded object defines it.
void* real_for_caller(RealSlot* slot, const void* caller_pc);

// The object (link_map name, "" for the main program) that contains pc, or nullptr.
const char* object_name_of(const void* pc);

// True if pc lies inside libparwidth.so itself.
bool is_self(const void* pc);

// The real pthread_create, for threads of parwidth's own (the monitor): they
// are not governed by our hook.
using ThreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
ThreadCreateFn real_pthread_create();

}  // namespace pw::hooks
