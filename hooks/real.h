// hooks/real: finding the original definition of an interposed symbol.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "counters/counters.h"

struct dl_phdr_info;

namespace pw::hooks {

// One per hook. `global` is the definition in the global scope after us,
// bound once: a bind_list.h slot in the constructor (RTLD_NEXT), a
// call_list.h slot at its first use (the startup objects' symbol tables, no
// loader call). When there is none,
// the definition is looked up per calling object (reading the loaded objects'
// symbol tables, no loader calls) and cached in one table for all slots,
// keyed by (slot, calling object): an entry holds while no object has been
// unloaded since it was written (the loader reuses a closed object's
// link_map and addresses for the next one), and a "not found" only while
// nothing has been loaded either.
enum class Need { kRequired, kOptional };  // bind_list.h's column

struct RealSlot {
  constexpr RealSlot(const char* n, const char* v, Need w) : name(n), version(v), need(w) {}
  const char* name;
  const char* version;  // glibc symbol version to ask for first, or nullptr
  Need need;
  std::atomic<void*> global{nullptr};
  std::atomic<bool> bound{false};
  std::atomic<bool> reported{false};  // its absence was said (original_missing)
};

// The one policy for a call that finds no original (hook.h, PW_MISSING): one
// line on stderr naming it, once per name (no allocation, no lock: exec hooks
// run in vfork children), errno = ENOSYS; returns ENOSYS for the hooks that
// return an error number.
int original_missing(RealSlot* slot) noexcept;

// The loader's counts of objects loaded and unloaded so far (dl_iterate_phdr's
// dlpi_adds and dlpi_subs): a cheap test of whether anything was loaded or
// unloaded since an earlier count.
struct LoadCount {
  unsigned long long adds = 0, subs = 0;
};
LoadCount load_count();

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
// nullptr only if no loaded object defines it. An OpenMP entry point goes to the
// runtime the loader bound the caller's other OpenMP calls to (read from its
// GOT), where several copies are loaded.
void* real_for_caller(RealSlot* slot, const void* caller_pc);

// The object (link_map name, "" for the main program) that contains pc, or nullptr.
const char* object_name_of(const void* pc);

// The load address of the object that contains pc (its link_map's l_addr,
// dl_iterate_phdr's dlpi_addr), or 0 if pc is in no loaded object.
uintptr_t object_base_of(const void* pc);

// True if a and b lie in the same loaded object.
bool same_object(const void* a, const void* b);

// Inside a dl_iterate_phdr callback: the definition of `name` in the object
// `info` describes, from that object's own symbol table (what it defines
// itself, not what it reaches through the libraries it needs), or nullptr.
// Never one of ours. Reads memory only: the walk keeps the object loaded,
// and no loader call is made inside it.
void* object_defines(const struct dl_phdr_info* info, const char* name);

// True if pc lies inside libparwidth.so itself.
bool is_self(const void* pc);

}  // namespace pw::hooks
