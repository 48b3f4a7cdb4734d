// hooks/dynsym: reading a loaded object's dynamic symbol table in memory.
//
// What the hooks use instead of dlopen/dlsym once the process runs: the
// loader's own calls take its lock, which a thread running a library
// constructor holds, so a hook that calls them can wait forever on a thread
// that waits for it. Everything here reads memory the loader mapped; the
// caller keeps the object loaded (inside a dl_iterate_phdr callback, or for
// an object whose code is on its stack). No allocation, no locks.
#pragma once

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstdint>

namespace pw::hooks {

struct DynTables {
  uintptr_t base = 0;
  const ElfW(Sym) * syms = nullptr;
  const char* strs = nullptr;
  size_t strsz = 0;
  const uint32_t* sysv = nullptr;  // DT_HASH
  const uint32_t* gnu = nullptr;   // DT_GNU_HASH
  const ElfW(Half) * versym = nullptr;
  const char* soname = nullptr;
  const ElfW(Dyn) * dyn = nullptr;  // to walk DT_NEEDED
};

// Reads the tables of the object loaded at `base` with dynamic section
// `dyn`; false when it has no symbol or string table.
bool dyn_tables_read(uintptr_t base, const ElfW(Dyn) * dyn, DynTables* out);

// The number of entries in the dynamic symbol table.
size_t dyn_symbol_count(const DynTables& t);

// The address of the default-version definition of a function or object
// `name` in this object (what dlsym on its handle would find first in it),
// or nullptr. An indirect function (STT_GNU_IFUNC) is reported through
// *ifunc and not resolved.
void* dyn_lookup(const DynTables& t, const char* name, bool* ifunc = nullptr);

// Where the loader bound this object's own imports (its GOT): the address held
// for the first import named one of names[0..n) that `accept` takes (a lazy
// PLT entry not yet called still points into the object itself: the caller's
// accept tells), or nullptr. x86-64 and AArch64 relocations.
void* dyn_import_bound(const DynTables& t, const char* const* names, size_t n,
                       bool (*accept)(const void* bound, void* data), void* data);

// Calls fn(needed_name, data) for each DT_NEEDED entry until it returns true.
bool dyn_needed_any(const DynTables& t, bool (*fn)(const char*, void*), void* data);

}  // namespace pw::hooks
