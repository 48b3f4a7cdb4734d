// hooks/real: finding the original definition of an interposed symbol.
#pragma once

#include <pthread.h>

#include <atomic>

#include "counters/counters.h"

namespace pw::hooks {

// One per hook. `global` is the definition found through RTLD_NEXT (the
// global scope after us), bound once, in the constructor. When there is none,
// the definition is looked up per calling object (reading the loaded objects'
// symbol tables, no loader calls) and cached in one table for all slots,
// keyed by (slot, calling object): an entry holds while no object has been
// unloaded since it was written (the loader reuses a closed object's
// link_map and addresses for the next one), and a "not found" only while
// nothing has been loaded either.
struct RealSlot {
  constexpr RealSlot(const char* n, const char* v) : name(n), version(v) {}
  const char* name;
  const char* version;  // glibc symbol version to ask for first, or nullptr
  std::atomic<void*> global{nullptr};
  std::atomic<bool> bound{false};
};

// How many times a per-caller original was looked up in the loaded objects'
// symbol tables (the slow path; a cached answer does not count).
unsigned long long real_lookups();

// Binds every slot in bind_list.h (idempotent, thread-safe; cheap after the
// first call). Called from the constructor: dlsym takes the loader's lock,
// which a hook must never wait for (a thread in a library's constructor holds
// it, and may be waiting for the thread that runs the hook).
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
counters::ThreadCreateFn real_pthread_create();

}  // namespace pw::hooks
