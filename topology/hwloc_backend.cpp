// The hwloc backend: libhwloc is dlopen'ed RTLD_LOCAL on first use and called through a table.
//
// Never linked: a NEEDED entry would load hwloc into every process the preload touches, even
// /bin/true, and its symbols would land in the host's global scope next to the host's own hwloc
// (MPI and PyTorch bundle one). Only <hwloc.h>'s types are used; its inline helpers call symbols
// we did not resolve, so every call below goes through Api.
#include <dlfcn.h>
#include <hwloc.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo::internal {

namespace {

struct Api {
  bool ok = false;
  std::string why;  // why it could not be loaded
  unsigned (*get_api_version)();
  int (*topology_init)(hwloc_topology_t*);
  int (*topology_set_flags)(hwloc_topology_t, unsigned long);
  int (*topology_set_xml)(hwloc_topology_t, const char*);
  int (*topology_set_synthetic)(hwloc_topology_t, const char*);
  int (*topology_set_cache_types_filter)(hwloc_topology_t, enum hwloc_type_filter_e);
  int (*topology_set_icache_types_filter)(hwloc_topology_t, enum hwloc_type_filter_e);
  int (*topology_load)(hwloc_topology_t);
  void (*topology_destroy)(hwloc_topology_t);
  int (*get_type_depth)(hwloc_topology_t, hwloc_obj_type_t);
  unsigned (*get_nbobjs_by_depth)(hwloc_topology_t, int);
  hwloc_obj_t (*get_obj_by_depth)(hwloc_topology_t, int, unsigned);
};

template <typename F>
bool bind(void* handle, const char* name, F* fn, std::string* why) {
  *fn = reinterpret_cast<F>(dlsym(handle, name));
  if (*fn == nullptr) *why = std::string(kHwlocLibrary) + " lacks " + name;
  return *fn != nullptr;
}

Api api_open() {
  Api a{};
  // The handle is never closed: the topology code may be called again at any time, and
  // unloading a library that has run in this process buys nothing.
  void* h = dlopen(kHwlocLibrary, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    a.why = e ? e : std::string("dlopen(") + kHwlocLibrary + ") failed";
    return a;
  }
  bool ok = bind(h, "hwloc_get_api_version", &a.get_api_version, &a.why) &&
            bind(h, "hwloc_topology_init", &a.topology_init, &a.why) &&
            bind(h, "hwloc_topology_set_flags", &a.topology_set_flags, &a.why) &&
            bind(h, "hwloc_topology_set_xml", &a.topology_set_xml, &a.why) &&
            bind(h, "hwloc_topology_set_synthetic", &a.topology_set_synthetic, &a.why) &&
            bind(h, "hwloc_topology_set_cache_types_filter", &a.topology_set_cache_types_filter,
                 &a.why) &&
            bind(h, "hwloc_topology_set_icache_types_filter", &a.topology_set_icache_types_filter,
                 &a.why) &&
            bind(h, "hwloc_topology_load", &a.topology_load, &a.why) &&
            bind(h, "hwloc_topology_destroy", &a.topology_destroy, &a.why) &&
            bind(h, "hwloc_get_type_depth", &a.get_type_depth, &a.why) &&
            bind(h, "hwloc_get_nbobjs_by_depth", &a.get_nbobjs_by_depth, &a.why) &&
            bind(h, "hwloc_get_obj_by_depth", &a.get_obj_by_depth, &a.why);
  // hwloc_obj's layout is what we read; it is only stable within one major API version.
  if (ok && (a.get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
    a.why = std::string(kHwlocLibrary) + " has API version " +
            std::to_string(a.get_api_version() >> 16) + ".x, built against " +
            std::to_string(HWLOC_API_VERSION >> 16) + ".x";
    ok = false;
  }
  a.ok = ok;
  return a;
}

// One dlopen per process; C++11 makes the initialisation of a local static thread-safe.
const Api& api() {
  static const Api a = [] {
    try {
      return api_open();
    } catch (const std::bad_alloc&) {
      return Api{};
    }
  }();
  return a;
}

// Flags in order of preference: a runtime older than the headers rejects flags it does not know
// (EINVAL), so fall back to what every 2.x has.
//  - INCLUDE_DISALLOWED: hwloc otherwise drops PUs outside the cgroup cpuset; we want the whole
//    machine and intersect cpusets and affinity ourselves, with notes saying which limit bound.
//    It has to be set for XML too, or PUs an exported XML marks disallowed are dropped.
//  - DONT_CHANGE_BINDING (2.5): the x86 backend otherwise rebinds the calling thread to every PU
//    to run cpuid, inside the host's thread, while the host's other threads run.
//  - NO_DISTANCES / NO_MEMATTRS / NO_CPUKINDS (2.8): work we never read; skipping it is cheaper.
unsigned long flags_preferred() {
  return HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED | HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING |
         HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS |
         HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS;
}

struct Topology {
  const Api& a;
  hwloc_topology_t t = nullptr;
  explicit Topology(const Api& api_) : a(api_) {}
  ~Topology() {
    if (t) a.topology_destroy(t);
  }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
};

hwloc_obj_t ancestor(hwloc_obj_t o, hwloc_obj_type_t type) {
  for (hwloc_obj_t p = o->parent; p; p = p->parent) {
    if (p->type == type) return p;
  }
  return nullptr;
}

}  // namespace

bool hwloc_available() {
  return api().ok;
}

Status hwloc_load(const std::string& spec, Machine* out, std::string* err) {
  const Api& a = api();
  if (!a.ok) {
    err_set(err, "hwloc: " + a.why);
    return Status::kUnsupported;
  }
  static const std::string kSynthetic = "synthetic:";
  bool synthetic = spec.compare(0, kSynthetic.size(), kSynthetic) == 0;
  std::string source = spec.empty() ? "hwloc" : synthetic ? spec : "xml:" + spec;

  Topology topo(a);
  if (a.topology_init(&topo.t) != 0) {
    topo.t = nullptr;
    err_set(err, source + ": hwloc_topology_init failed");
    return Status::kIoError;
  }
  if (a.topology_set_flags(topo.t, flags_preferred()) != 0 &&
      a.topology_set_flags(topo.t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) {
    err_set(err, source + ": hwloc_topology_set_flags failed");
    return Status::kIoError;
  }
  // Caches are the bulk of a load on Linux and we group by package and core only.
  a.topology_set_cache_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_NONE);
  a.topology_set_icache_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_NONE);
  if (synthetic) {
    if (a.topology_set_synthetic(topo.t, spec.c_str() + kSynthetic.size()) != 0) {
      err_set(err, source + ": not a valid hwloc synthetic description");
      return Status::kInvalid;
    }
  } else if (!spec.empty()) {
    std::string content;
    std::string read_err;
    // hwloc's own message for an unreadable file is only on stderr; tell the two apart here.
    Status st = file_read(spec, &content, &read_err);
    if (st == Status::kUnsupported) {
      err_set(err, source + ": no such file");
      return Status::kIoError;
    }
    if (st != Status::kOk) {
      err_set(err, source + ": " + read_err);
      return st;
    }
    if (a.topology_set_xml(topo.t, spec.c_str()) != 0) {
      err_set(err, source + ": not an hwloc XML topology");
      return Status::kInvalid;
    }
  }
  if (a.topology_load(topo.t) != 0) {
    err_set(err, source + ": hwloc_topology_load failed" +
                     (spec.empty() || synthetic ? "" : " (not an hwloc XML topology?)"));
    return spec.empty() ? Status::kIoError : Status::kInvalid;
  }

  int depth = a.get_type_depth(topo.t, HWLOC_OBJ_PU);
  if (depth < 0) {
    err_set(err, source + ": hwloc found no PU level");
    return Status::kInvalid;
  }
  unsigned n = a.get_nbobjs_by_depth(topo.t, depth);
  std::vector<PuInfo> pus;
  pus.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    hwloc_obj_t pu = a.get_obj_by_depth(topo.t, depth, i);
    if (pu == nullptr || pu->os_index == HWLOC_UNKNOWN_INDEX) continue;
    PuInfo p;
    p.pu = static_cast<int>(pu->os_index);
    if (hwloc_obj_t pkg = ancestor(pu, HWLOC_OBJ_PACKAGE)) {
      p.package_key = pkg->logical_index;
      p.package_os = pkg->os_index == HWLOC_UNKNOWN_INDEX ? static_cast<int>(pkg->logical_index)
                                                          : static_cast<int>(pkg->os_index);
    }
    if (hwloc_obj_t core = ancestor(pu, HWLOC_OBJ_CORE)) p.core_key = core->logical_index;
    pus.push_back(p);
  }
  return machine_build(std::move(pus), source, out, err);
}

}  // namespace pw::topo::internal
