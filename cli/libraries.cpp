// cli/libraries: probing the optional libraries the preload dlopens.
#include "cli/libraries.h"

#include <dlfcn.h>
#include <link.h>

#include "counters/counters.h"
#include "topology/topology.h"

namespace pw::cli {

std::vector<OptionalLibrary> optional_libraries_probe() {
  // The sonames are the ones topology/ and counters/ dlopen; the packages
  // are packaging/'s Recommends.
  std::vector<OptionalLibrary> libs = {
      {"hwloc",
       topo::kHwlocLibrary,
       "libhwloc15",
       "machine topology (sockets, cores, SMT); without it, sysfs",
       false,
       {}},
      {"PAPI",
       counters::kPapiLibrary,
       "libpapi7.0",
       "perf_event counters for the monitor (PARWIDTH_PAPI=auto or on); without it, /proc only",
       false,
       {}},
  };
  for (OptionalLibrary& l : libs) {
    void* h = dlopen(l.soname, RTLD_LAZY | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      l.path = e ? e : "not found";
      continue;
    }
    l.found = true;
    struct link_map* map = nullptr;
    l.path = dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map ? map->l_name : l.soname;
    dlclose(h);
  }
  return libs;
}

}  // namespace pw::cli
