// hooks/imports: reading loaded objects' dynamic symbol tables for imports.
#include "hooks/imports.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

#include "hooks/dynsym.h"
#include "hooks/real.h"

namespace pw::hooks {
namespace {

struct Query {
  const char* const* names;
  size_t n;
  const char* found;
};

int object_scan(struct dl_phdr_info* info, size_t, void* data) {
  Query* q = static_cast<Query*>(data);
  const uintptr_t base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
  if (!dyn || is_self(dyn)) return 0;
  DynTables t;
  if (!dyn_tables_read(base, dyn, &t)) return 0;
  const size_t count = dyn_symbol_count(t);
  for (size_t s = 1; s < count; ++s) {
    const ElfW(Sym)& sym = t.syms[s];
    if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0 || sym.st_name >= t.strsz) continue;
    const char* name = t.strs + sym.st_name;
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
  dl_iterate_phdr(object_scan, &q);
  if (who) *who = q.found;
  return q.found != nullptr;
}

}  // namespace pw::hooks
