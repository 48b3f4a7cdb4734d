// hooks/dynsym: hash-table lookups in a loaded object's dynamic symbols.
#include "hooks/dynsym.h"

#include <cstring>

namespace pw::hooks {
namespace {

// The loader relocates most objects' dynamic entries in place; a read-only
// dynamic section (the vDSO) keeps them relative to the load base.
uintptr_t dyn_addr(uintptr_t base, uintptr_t ptr) {
  return ptr < base ? base + ptr : ptr;
}

uint32_t gnu_hash(const char* s) {
  uint32_t h = 5381;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s); *p; ++p) h = h * 33 + *p;
  return h;
}

uint32_t sysv_hash(const char* s) {
  uint32_t h = 0;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s); *p; ++p) {
    h = (h << 4) + *p;
    const uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// Whether symbol index i is a usable default definition named `name`.
bool matches(const DynTables& t, uint32_t i, const char* name) {
  const ElfW(Sym)& s = t.syms[i];
  if (s.st_shndx == SHN_UNDEF || s.st_name == 0 || s.st_name >= t.strsz) return false;
  const unsigned type = ELF64_ST_TYPE(s.st_info), bind = ELF64_ST_BIND(s.st_info);
  if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC && type != STT_NOTYPE)
    return false;
  if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) return false;
  // A non-default version (name@VER, not name@@VER) is not what an
  // unversioned lookup binds to.
  if (t.versym && (t.versym[i] & 0x8000)) return false;
  return strcmp(t.strs + s.st_name, name) == 0;
}

void* found(const DynTables& t, uint32_t i, bool* ifunc) {
  const ElfW(Sym)& s = t.syms[i];
  if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC) {
    if (ifunc) *ifunc = true;
    return nullptr;
  }
  return reinterpret_cast<void*>(t.base + s.st_value);
}

}  // namespace

bool dyn_tables_read(uintptr_t base, const ElfW(Dyn) * dyn, DynTables* out) {
  *out = DynTables{};
  if (!dyn) return false;
  out->base = base;
  out->dyn = dyn;
  uintptr_t soname = 0;
  bool has_soname = false;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    const uintptr_t p = static_cast<uintptr_t>(d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_SYMTAB:
        out->syms = reinterpret_cast<const ElfW(Sym)*>(dyn_addr(base, p));
        break;
      case DT_STRTAB:
        out->strs = reinterpret_cast<const char*>(dyn_addr(base, p));
        break;
      case DT_STRSZ:
        out->strsz = static_cast<size_t>(d->d_un.d_val);
        break;
      case DT_HASH:
        out->sysv = reinterpret_cast<const uint32_t*>(dyn_addr(base, p));
        break;
      case DT_GNU_HASH:
        out->gnu = reinterpret_cast<const uint32_t*>(dyn_addr(base, p));
        break;
      case DT_VERSYM:
        out->versym = reinterpret_cast<const ElfW(Half)*>(dyn_addr(base, p));
        break;
      case DT_SONAME:
        soname = static_cast<uintptr_t>(d->d_un.d_val);
        has_soname = true;
        break;
      default:
        break;
    }
  }
  if (!out->syms || !out->strs) return false;
  if (has_soname && soname < out->strsz) out->soname = out->strs + soname;
  return true;
}

size_t dyn_symbol_count(const DynTables& t) {
  if (t.sysv) return t.sysv[1];  // nchain
  if (!t.gnu) return 0;
  const uint32_t nbuckets = t.gnu[0], symoffset = t.gnu[1], bloom_words = t.gnu[2];
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(
      reinterpret_cast<const ElfW(Addr)*>(t.gnu + 4) + bloom_words);
  const uint32_t* chain = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b)
    if (buckets[b] > last) last = buckets[b];
  if (last < symoffset) return symoffset;
  while (!(chain[last - symoffset] & 1u)) ++last;
  return static_cast<size_t>(last) + 1;
}

void* dyn_lookup(const DynTables& t, const char* name, bool* ifunc) {
  if (ifunc) *ifunc = false;
  if (t.gnu) {
    const uint32_t nbuckets = t.gnu[0], symoffset = t.gnu[1], bloom_words = t.gnu[2];
    if (nbuckets == 0) return nullptr;
    const uint32_t* buckets = reinterpret_cast<const uint32_t*>(
        reinterpret_cast<const ElfW(Addr)*>(t.gnu + 4) + bloom_words);
    const uint32_t* chain = buckets + nbuckets;
    const uint32_t h = gnu_hash(name);
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset) return nullptr;
    for (;; ++i) {
      const uint32_t c = chain[i - symoffset];
      if ((c | 1u) == (h | 1u) && matches(t, i, name)) return found(t, i, ifunc);
      if (c & 1u) return nullptr;
    }
  }
  if (t.sysv) {
    const uint32_t nbucket = t.sysv[0];
    if (nbucket == 0) return nullptr;
    const uint32_t* bucket = t.sysv + 2;
    const uint32_t* chain = bucket + nbucket;
    const uint32_t nchain = t.sysv[1];
    for (uint32_t i = bucket[sysv_hash(name) % nbucket], n = 0; i != STN_UNDEF && n < nchain;
         i = chain[i], ++n)
      if (i < nchain && matches(t, i, name)) return found(t, i, ifunc);
  }
  return nullptr;
}

void* dyn_import_bound(const DynTables& t, const char* const* names, size_t n,
                       bool (*accept)(const void* bound, void* data), void* data) {
#if defined(__x86_64__)
  constexpr uint32_t kJumpSlot = 7, kGlobDat = 6;  // R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
  constexpr uint32_t kJumpSlot = 1026, kGlobDat = 1025;  // R_AARCH64_JUMP_SLOT, _GLOB_DAT
#else
  (void)t, (void)names, (void)n, (void)accept, (void)data;
  return nullptr;
#endif
#if defined(__x86_64__) || defined(__aarch64__)
  uintptr_t jmprel = 0, rela = 0;
  size_t jmprel_size = 0, rela_size = 0;
  bool plt_rela = true;
  for (const ElfW(Dyn)* d = t.dyn; d && d->d_tag != DT_NULL; ++d) {
    const uintptr_t p = static_cast<uintptr_t>(d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_JMPREL:
        jmprel = dyn_addr(t.base, p);
        break;
      case DT_PLTRELSZ:
        jmprel_size = static_cast<size_t>(d->d_un.d_val);
        break;
      case DT_PLTREL:
        plt_rela = d->d_un.d_val == DT_RELA;
        break;
      case DT_RELA:
        rela = dyn_addr(t.base, p);
        break;
      case DT_RELASZ:
        rela_size = static_cast<size_t>(d->d_un.d_val);
        break;
      default:
        break;
    }
  }
  const size_t count = dyn_symbol_count(t);
  const struct {
    uintptr_t at;
    size_t size;
  } tables[] = {{plt_rela ? jmprel : 0, jmprel_size}, {rela, rela_size}};
  for (const auto& table : tables) {
    if (!table.at) continue;
    const auto* r = reinterpret_cast<const ElfW(Rela)*>(table.at);
    for (size_t i = 0; i < table.size / sizeof(ElfW(Rela)); ++i) {
      const uint32_t type = ELF64_R_TYPE(r[i].r_info);
      const size_t sym = ELF64_R_SYM(r[i].r_info);
      if ((type != kJumpSlot && type != kGlobDat) || sym == 0 || (count && sym >= count)) continue;
      const ElfW(Sym)& s = t.syms[sym];
      if (s.st_name == 0 || s.st_name >= t.strsz) continue;
      const char* name = t.strs + s.st_name;
      for (size_t k = 0; k < n; ++k) {
        if (strcmp(name, names[k]) != 0) continue;
        void* bound = *reinterpret_cast<void* const*>(t.base + r[i].r_offset);
        if (bound && accept(bound, data)) return bound;
      }
    }
  }
  return nullptr;
#endif
}

bool dyn_needed_any(const DynTables& t, bool (*fn)(const char*, void*), void* data) {
  for (const ElfW(Dyn)* d = t.dyn; d && d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_NEEDED && d->d_un.d_val < t.strsz && fn(t.strs + d->d_un.d_val, data))
      return true;
  return false;
}

}  // namespace pw::hooks
