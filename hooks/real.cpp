// hooks/real: binding originals (RTLD_NEXT, versioned) and per-caller lookup
// for names that only an RTLD_LOCAL library defines (symbol tables read in
// memory: no loader calls inside hooks).
#include "hooks/real.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "hooks/dynsym.h"
#include "hooks/slots.h"

#define PW_BIND(name, version, need) \
  ::pw::hooks::RealSlot PW_REAL_SLOT(name){#name, version, ::pw::hooks::Need::need};
#include "hooks/bind_list.h"
#undef PW_BIND
#define PW_CALL(name) \
  ::pw::hooks::RealSlot PW_REAL_SLOT(name){#name, nullptr, ::pw::hooks::Need::kOptional};
#include "hooks/call_list.h"
#undef PW_CALL

namespace pw::hooks {
namespace {

RealSlot* const kSlots[] = {
#define PW_BIND(name, version, need) &PW_REAL_SLOT(name),
#include "hooks/bind_list.h"
#undef PW_BIND
};

// Our own object's text range, to never hand our own hook back as "the original".
struct SelfRange {
  const void* start = nullptr;
  const void* end = nullptr;
};

SelfRange self_range() {
  static SelfRange r = [] {
    SelfRange s;
    struct dl_find_object fo;
    if (_dl_find_object(reinterpret_cast<void*>(&self_range), &fo) == 0) {
      s.start = fo.dlfo_map_start;
      s.end = fo.dlfo_map_end;
    }
    return s;
  }();
  return r;
}

void* next_lookup(const char* name, const char* version) {
#if defined(__SANITIZE_THREAD__)
  // The stress suite's TSan build: ThreadSanitizer's interceptors are
  // unversioned, and a versioned lookup would go past them to libc (the
  // monitor's thread would then run instrumented code that TSan never saw start).
  version = nullptr;
#endif
  void* p = nullptr;
  if (version) p = dlvsym(RTLD_NEXT, name, version);
  if (!p) p = dlsym(RTLD_NEXT, name);
  if (p && is_self(p)) p = nullptr;
  return p;
}

const ElfW(Dyn) * dynamic_of(const struct dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      return reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  return nullptr;
}

// How many objects were loaded when the constructor bound the slots (the
// startup objects, all in the global scope and first in the loader's list);
// -1 before.
std::atomic<int> g_startup_objects{-1};

// RTLD_NEXT without the loader: the first definition in a startup object
// after ours. For slots bound after the constructor (a hook's private ones).
void* next_lookup_in_memory(const char* name) {
  struct Next {
    const char* name;
    int limit, index;
    bool after_self;
    void* found;
  } q{name, g_startup_objects.load(std::memory_order_acquire), 0, false, nullptr};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        Next* n = static_cast<Next*>(data);
        if (n->index++ >= n->limit) return 1;
        const ElfW(Dyn)* dyn = dynamic_of(info);
        if (!dyn) return 0;
        if (is_self(dyn)) {
          n->after_self = true;
          return 0;
        }
        DynTables t;
        if (!n->after_self || !dyn_tables_read(info->dlpi_addr, dyn, &t)) return 0;
        void* p = dyn_lookup(t, n->name);
        if (!p || is_self(p)) return 0;
        n->found = p;
        return 1;
      },
      &q);
  return q.found;
}

void bind_one(RealSlot* s) {
  if (s->bound.load(std::memory_order_acquire)) return;
  // dlsym takes the loader's lock: only in the constructor, where it is ours.
  void* p = g_startup_objects.load(std::memory_order_acquire) < 0 ? next_lookup(s->name, s->version)
                                                                  : next_lookup_in_memory(s->name);
  s->global.store(p, std::memory_order_release);
  s->bound.store(true, std::memory_order_release);
}

struct Search {
  const char* name;
  const DynTables* caller;  // only objects it needs, or any object when null
  void* found;
};

// Whether `needed` (a DT_NEEDED string) names the object with this soname or path.
bool names_object(const char* needed, const char* soname, const char* path) {
  if (soname && strcmp(needed, soname) == 0) return true;
  if (!path || !*path) return false;
  const char* base = strrchr(path, '/');
  return strcmp(needed, base ? base + 1 : path) == 0;
}

int search_object(struct dl_phdr_info* info, size_t, void* data) {
  Search* q = static_cast<Search*>(data);
  const ElfW(Dyn)* dyn = dynamic_of(info);
  if (!dyn || is_self(dyn)) return 0;
  DynTables t;
  if (!dyn_tables_read(info->dlpi_addr, dyn, &t)) return 0;
  if (q->caller) {
    struct Name {
      const char* soname;
      const char* path;
    } n{t.soname, info->dlpi_name};
    const bool is_needed = dyn_needed_any(
        *q->caller,
        [](const char* needed, void* d) {
          const Name* object = static_cast<const Name*>(d);
          return names_object(needed, object->soname, object->path);
        },
        &n);
    if (!is_needed) return 0;
  }
  void* p = dyn_lookup(t, q->name);
  if (!p || is_self(p)) return 0;
  q->found = p;
  return 1;
}

// The definition reached from the caller's object `map`: the object itself,
// then the libraries it needs (where an RTLD_LOCAL library's references
// resolve after the global scope), then any loaded object as a last resort.
// Reads symbol tables only: dlopen(RTLD_NOLOAD)/dlsym would take the loader's
// lock inside a hook.
void* symbol_lookup_from(const char* name, const struct link_map* map) {
  DynTables caller;
  const bool have_caller = map && !is_self(map->l_ld) &&
                           dyn_tables_read(static_cast<uintptr_t>(map->l_addr), map->l_ld, &caller);
  if (have_caller) {
    void* p = dyn_lookup(caller, name);
    if (p && !is_self(p)) return p;
    Search q{name, &caller, nullptr};
    dl_iterate_phdr(search_object, &q);
    if (q.found) return q.found;
  }
  Search any{name, nullptr, nullptr};
  dl_iterate_phdr(search_object, &any);
  return any.found;
}

// Per-caller originals, for every slot, in one table: open addressing over
// (slot, calling object), at most kProbe places per key, so a lookup costs
// the same whatever the number of objects that call hooks. Entries are written
// under a sequence number (odd while a writer fills one) and read
// optimistically; a full neighbourhood gives up its first place. kTable
// places hold far more (slot, object) pairs than a process has: an evicted
// pair is only looked up again.
struct Entry {
  std::atomic<unsigned> seq{0};
  std::atomic<const RealSlot*> slot{nullptr};
  std::atomic<const void*> obj{nullptr};
  std::atomic<void*> fn{nullptr};
  std::atomic<unsigned long long> adds{0}, subs{0};
};
constexpr size_t kTable = 4096;  // a power of two
constexpr size_t kProbe = 8;
Entry g_table[kTable];
std::atomic<unsigned long long> g_lookups{0};

size_t home_of(const RealSlot* slot, const void* map) {
  uint64_t h = reinterpret_cast<uintptr_t>(slot) * 0x9e3779b97f4a7c15ull;
  h ^= reinterpret_cast<uintptr_t>(map) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
  h ^= h >> 29;
  return static_cast<size_t>(h) & (kTable - 1);
}

// The cached original of `slot` for `map`, when its entry still holds.
bool cached(const RealSlot* slot, const void* map, const LoadCount& now, void** fn,
            void* not_found) {
  const size_t home = home_of(slot, map);
  for (size_t k = 0; k < kProbe; ++k) {
    Entry& e = g_table[(home + k) & (kTable - 1)];
    const unsigned s1 = e.seq.load(std::memory_order_acquire);
    if (s1 & 1u) continue;
    const RealSlot* sl = e.slot.load(std::memory_order_acquire);
    if (!sl) return false;  // never written: the key is not further on either
    const void* obj = e.obj.load(std::memory_order_acquire);
    void* f = e.fn.load(std::memory_order_acquire);
    const unsigned long long adds = e.adds.load(std::memory_order_acquire);
    const unsigned long long subs = e.subs.load(std::memory_order_acquire);
    // The fields are stored with release after the writer made seq odd: a field
    // from a newer write makes this load see that odd (or a later) seq. (No
    // fence: ThreadSanitizer does not model them.)
    if (e.seq.load(std::memory_order_relaxed) != s1) continue;
    if (sl != slot || obj != map) continue;
    if (!f || subs != now.subs) return false;
    if (f == not_found && adds != now.adds) return false;
    *fn = f == not_found ? nullptr : f;
    return true;
  }
  return false;
}

void cache_store(const RealSlot* slot, const void* map, const LoadCount& now, void* fn) {
  const size_t home = home_of(slot, map);
  Entry* e = nullptr;
  for (size_t k = 0; k < kProbe && !e; ++k) {
    Entry& x = g_table[(home + k) & (kTable - 1)];
    const RealSlot* sl = x.slot.load(std::memory_order_relaxed);
    if (!sl || (sl == slot && x.obj.load(std::memory_order_relaxed) == map)) e = &x;
  }
  if (!e) e = &g_table[home];
  unsigned s = e->seq.load(std::memory_order_relaxed);
  // Another writer has it: leave the entry to that one.
  if ((s & 1u) || !e->seq.compare_exchange_strong(s, s + 1, std::memory_order_acquire)) return;
  e->slot.store(slot, std::memory_order_release);
  e->obj.store(map, std::memory_order_release);
  e->fn.store(fn, std::memory_order_release);
  e->adds.store(now.adds, std::memory_order_release);
  e->subs.store(now.subs, std::memory_order_release);
  e->seq.store(s + 2, std::memory_order_release);
}

}  // namespace

LoadCount load_count() {
  LoadCount c;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t size, void* data) -> int {
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
          static_cast<LoadCount*>(data)->adds = info->dlpi_adds;
          static_cast<LoadCount*>(data)->subs = info->dlpi_subs;
        }
        return 1;
      },
      &c);
  return c;
}

bool is_self(const void* pc) {
  const SelfRange r = self_range();
  return pc >= r.start && pc < r.end;
}

int original_missing(RealSlot* slot) noexcept {
  if (!slot->reported.exchange(true)) {
    char line[256];
    const int n =
        snprintf(line, sizeof line,
                 "parwidth: warning: no original %s found; the call fails (ENOSYS)\n", slot->name);
    if (n > 0) {
      const ssize_t w =
          write(STDERR_FILENO, line,
                static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
      (void)w;  // stderr closed or full: nothing else to tell
    }
  }
  errno = ENOSYS;
  return ENOSYS;
}

void bind_all() {
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  for (RealSlot* s : kSlots) {
    bind_one(s);
    // libc's own: a process without it is reported by name now, not at the call.
    if (s->need == Need::kRequired && !s->global.load(std::memory_order_relaxed))
      original_missing(s);
  }
  int objects = 0;
  dl_iterate_phdr(
      [](struct dl_phdr_info*, size_t, void* n) -> int { return ++*static_cast<int*>(n), 0; },
      &objects);
  g_startup_objects.store(objects, std::memory_order_release);
  done.store(true, std::memory_order_release);
}

namespace {

// OpenMP's entry points parwidth hooks or calls (omp_*, GOMP_*, __kmpc_*,
// kmp_*) go to the runtime the caller's other OpenMP calls go to: several
// copies may be loaded (torch's libgomp.so.1 in the global scope, XGBoost's
// libgomp-<hash>.so.1 as its own dependency), and a region started in one
// whose thread numbers come from another crashes the program. The loader
// searches the global scope before the caller's own dependencies, and whether
// a copy is in the global scope, and was when the caller was bound, is not
// written where the caller can read it; the caller's GOT is. These are
// OpenMP functions parwidth never hooks: the loader's choice for them stands.
const char* const kOmpAnchors[] = {"omp_get_thread_num",   "omp_get_num_threads",
                                   "omp_in_parallel",      "GOMP_barrier",
                                   "GOMP_critical_start",  "GOMP_single_start",
                                   "GOMP_loop_end_nowait", "__kmpc_global_thread_num",
                                   "__kmpc_barrier",       "__kmpc_for_static_fini"};

bool is_openmp(const char* name) {
  return !strncmp(name, "omp_", 4) || !strncmp(name, "GOMP_", 5) || !strncmp(name, "__kmpc_", 7) ||
         !strncmp(name, "kmp_", 4);
}

// The definition of `name` in the OpenMP runtime the caller's own OpenMP
// imports were bound to, or nullptr (none bound yet, or that runtime lacks it).
void* openmp_bound_for(const char* name, const struct link_map* map) {
  DynTables caller;
  if (!map || is_self(map->l_ld) ||
      !dyn_tables_read(static_cast<uintptr_t>(map->l_addr), map->l_ld, &caller))
    return nullptr;
  void* bound = dyn_import_bound(
      caller, kOmpAnchors, sizeof kOmpAnchors / sizeof *kOmpAnchors,
      [](const void* p, void* m) {
        struct dl_find_object fo;
        // Bound elsewhere: not a lazy entry still pointing into the caller, not ours.
        return _dl_find_object(const_cast<void*>(p), &fo) == 0 && fo.dlfo_link_map != m &&
               !is_self(p);
      },
      const_cast<struct link_map*>(map));
  if (!bound) return nullptr;
  struct dl_find_object fo;
  if (_dl_find_object(bound, &fo) != 0 || !fo.dlfo_link_map) return nullptr;
  const struct link_map* rt = fo.dlfo_link_map;
  DynTables t;
  if (!dyn_tables_read(static_cast<uintptr_t>(rt->l_addr), rt->l_ld, &t)) return nullptr;
  void* p = dyn_lookup(t, name);
  return p && !is_self(p) ? p : nullptr;
}

}  // namespace

void* real_for_caller(RealSlot* slot, const void* caller_pc) {
  if (!slot->bound.load(std::memory_order_acquire)) bind_one(slot);
  if (void* g = slot->global.load(std::memory_order_acquire)) return g;
  struct dl_find_object fo;
  const struct link_map* map = nullptr;
  if (_dl_find_object(const_cast<void*>(caller_pc), &fo) == 0) map = fo.dlfo_link_map;
  // "Not defined anywhere this caller can reach" is cached too: the walk
  // below reads every loaded object.
  static char not_found;
  const LoadCount now = load_count();
  void* f = nullptr;
  if (map && cached(slot, map, now, &f, &not_found)) return f;
  g_lookups.fetch_add(1, std::memory_order_relaxed);
  f = is_openmp(slot->name) ? openmp_bound_for(slot->name, map) : nullptr;
  if (!f) f = symbol_lookup_from(slot->name, map);
  if (map) cache_store(slot, map, now, f ? f : &not_found);
  return f;
}

unsigned long long real_lookups() {
  return g_lookups.load(std::memory_order_relaxed);
}

const char* object_name_of(const void* pc) {
  struct dl_find_object fo;
  if (_dl_find_object(const_cast<void*>(pc), &fo) != 0 || !fo.dlfo_link_map) return nullptr;
  return fo.dlfo_link_map->l_name ? fo.dlfo_link_map->l_name : "";
}

uintptr_t object_base_of(const void* pc) {
  struct dl_find_object fo;
  if (_dl_find_object(const_cast<void*>(pc), &fo) != 0 || !fo.dlfo_link_map) return 0;
  return static_cast<uintptr_t>(fo.dlfo_link_map->l_addr);
}

bool same_object(const void* a, const void* b) {
  struct dl_find_object x, y;
  if (_dl_find_object(const_cast<void*>(a), &x) != 0) return false;
  if (_dl_find_object(const_cast<void*>(b), &y) != 0) return false;
  return x.dlfo_link_map == y.dlfo_link_map;
}

void* object_defines(const struct dl_phdr_info* info, const char* name) {
  const ElfW(Dyn)* dyn = dynamic_of(info);
  if (!dyn || is_self(dyn)) return nullptr;
  DynTables t;
  if (!dyn_tables_read(info->dlpi_addr, dyn, &t)) return nullptr;
  void* p = dyn_lookup(t, name);
  return p && !is_self(p) ? p : nullptr;
}

}  // namespace pw::hooks
