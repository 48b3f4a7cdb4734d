// hooks/real: binding originals (RTLD_NEXT, versioned) and per-caller lookup
// for names that only an RTLD_LOCAL library defines.
#include "hooks/real.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <string>
#include <vector>

#include "hooks/slots.h"

#define PW_BIND(name, version, required) \
  ::pw::hooks::RealSlot PW_REAL_SLOT(name){#name, version, required};
#include "hooks/bind_list.h"
#undef PW_BIND

namespace pw::hooks {
namespace {

RealSlot* const kSlots[] = {
#define PW_BIND(name, version, required) &PW_REAL_SLOT(name),
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

void* lookup_next(const char* name, const char* version) {
  void* p = nullptr;
  if (version) p = dlvsym(RTLD_NEXT, name, version);
  if (!p) p = dlsym(RTLD_NEXT, name);
  if (p && is_self(p)) p = nullptr;
  return p;
}

void bind_one(RealSlot* s) {
  if (s->bound.load(std::memory_order_acquire)) return;
  s->global.store(lookup_next(s->name, s->version), std::memory_order_release);
  s->bound.store(true, std::memory_order_release);
}

// The definition reached from the object that contains caller_pc: its own
// dependency scope (dlsym on a handle searches the object and its needed
// libraries, which is where an RTLD_LOCAL library's references resolve after
// the global scope), then any loaded object as a last resort.
void* lookup_from(const char* name, const struct link_map* map) {
  void* p = nullptr;
  if (map && map->l_name && map->l_name[0]) {
    if (void* h = dlopen(map->l_name, RTLD_LAZY | RTLD_NOLOAD)) {
      p = dlsym(h, name);
      dlclose(h);
      if (p && is_self(p)) p = nullptr;
    }
  }
  if (p) return p;
  // Collect the loaded objects' names first and look them up after the walk:
  // dlopen inside a dl_iterate_phdr callback takes the loader's locks in the
  // opposite order to a thread that is inside dlopen and walks the objects
  // (unwinding through a constructor, say), and the two deadlock.
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        // Nothing may unwind through the loader's frame (it holds a lock).
        try {
          if (info->dlpi_name && info->dlpi_name[0])
            static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
          return 0;
        } catch (...) {
          return 1;
        }
      },
      &names);
  for (const std::string& n : names) {
    void* h = dlopen(n.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    void* q = dlsym(h, name);
    dlclose(h);
    if (q && !is_self(q)) return q;
  }
  return nullptr;
}

}  // namespace

bool is_self(const void* pc) {
  const SelfRange r = self_range();
  return pc >= r.start && pc < r.end;
}

void bind_all() {
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  for (RealSlot* s : kSlots) bind_one(s);
  done.store(true, std::memory_order_release);
}

void* real_for_caller(RealSlot* slot, const void* caller_pc) {
  if (!slot->bound.load(std::memory_order_acquire)) bind_one(slot);
  if (void* g = slot->global.load(std::memory_order_acquire)) return g;
  struct dl_find_object fo;
  const struct link_map* map = nullptr;
  if (_dl_find_object(const_cast<void*>(caller_pc), &fo) == 0) map = fo.dlfo_link_map;
  // "Not defined anywhere this caller can reach" is cached too: the walk
  // below opens every loaded object, and an object's reach does not grow.
  static char not_found;
  for (int i = 0; i < RealSlot::kLocal; ++i) {
    if (slot->local_obj[i].load(std::memory_order_acquire) == map) {
      void* f = slot->local_fn[i].load(std::memory_order_acquire);
      if (f == &not_found) return nullptr;
      if (f) return f;
    }
  }
  void* f = lookup_from(slot->name, map);
  for (int i = 0; i < RealSlot::kLocal; ++i) {
    const void* expected = nullptr;
    if (map && slot->local_obj[i].compare_exchange_strong(expected, map)) {
      slot->local_fn[i].store(f ? f : &not_found, std::memory_order_release);
      break;
    }
  }
  return f;
}

const char* object_name_of(const void* pc) {
  struct dl_find_object fo;
  if (_dl_find_object(const_cast<void*>(pc), &fo) != 0 || !fo.dlfo_link_map) return nullptr;
  return fo.dlfo_link_map->l_name ? fo.dlfo_link_map->l_name : "";
}

}  // namespace pw::hooks
