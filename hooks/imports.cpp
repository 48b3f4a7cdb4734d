// hooks/imports: reading loaded objects' dynamic symbol tables for imports.
#include "hooks/imports.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

#include "hooks/real.h"

namespace pw::hooks {
namespace {

struct Query {
  const char* const* names;
  size_t n;
  const char* found;
};

// The loader relocates most objects' dynamic entries in place; a read-only
// dynamic section (the vDSO) keeps them relative to the load base.
uintptr_t dyn_addr(uintptr_t base, uintptr_t ptr) {
  return ptr < base ? base + ptr : ptr;
}

// The number of dynamic symbols, from DT_HASH or DT_GNU_HASH.
size_t symbol_count(const uint32_t* sysv, const uint32_t* gnu) {
  if (sysv) return sysv[1];  // nchain
  if (!gnu) return 0;
  const uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_words = gnu[2];
  const uint32_t* buckets =
      reinterpret_cast<const uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(gnu + 4) + bloom_words);
  const uint32_t* chain = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b)
    if (buckets[b] > last) last = buckets[b];
  if (last < symoffset) return symoffset;
  while (!(chain[last - symoffset] & 1u)) ++last;
  return static_cast<size_t>(last) + 1;
}

int scan_object(struct dl_phdr_info* info, size_t, void* data) {
  Query* q = static_cast<Query*>(data);
  const uintptr_t base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
  if (!dyn || is_self(dyn)) return 0;
  const ElfW(Sym)* syms = nullptr;
  const char* strs = nullptr;
  size_t strsz = 0;
  const uint32_t *sysv = nullptr, *gnu = nullptr;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    const uintptr_t p = static_cast<uintptr_t>(d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_SYMTAB:
        syms = reinterpret_cast<const ElfW(Sym)*>(dyn_addr(base, p));
        break;
      case DT_STRTAB:
        strs = reinterpret_cast<const char*>(dyn_addr(base, p));
        break;
      case DT_STRSZ:
        strsz = static_cast<size_t>(d->d_un.d_val);
        break;
      case DT_HASH:
        sysv = reinterpret_cast<const uint32_t*>(dyn_addr(base, p));
        break;
      case DT_GNU_HASH:
        gnu = reinterpret_cast<const uint32_t*>(dyn_addr(base, p));
        break;
      default:
        break;
    }
  }
  if (!syms || !strs) return 0;
  const size_t count = symbol_count(sysv, gnu);
  for (size_t s = 1; s < count; ++s) {
    const ElfW(Sym)& sym = syms[s];
    if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0 || sym.st_name >= strsz) continue;
    const char* name = strs + sym.st_name;
    for (size_t k = 0; k < q->n; ++k) {
      if (strcmp(name, q->names[k]) == 0) {
        q->found = q->names[k];
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace

bool any_object_imports(const char* const* names, size_t n, const char** who) {
  Query q{names, n, nullptr};
  dl_iterate_phdr(scan_object, &q);
  if (who) *who = q.found;
  return q.found != nullptr;
}

}  // namespace pw::hooks
