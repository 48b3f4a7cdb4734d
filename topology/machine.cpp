// machine_load: picks a backend for a spec, and the one grouping of PUs that every backend shares.
#include <algorithm>
#include <map>
#include <new>

#include "topology/internal.h"

namespace pw::topo {

namespace internal {

Status machine_build(std::vector<PuInfo> pus, const std::string& source, Machine* out,
                     std::string* err) {
  if (pus.empty()) {
    set_err(err, source + ": no processing units found");
    return Status::kInvalid;
  }
  std::sort(pus.begin(), pus.end(), [](const PuInfo& a, const PuInfo& b) { return a.pu < b.pu; });
  for (size_t i = 1; i < pus.size(); ++i) {
    if (pus[i].pu == pus[i - 1].pu) {
      set_err(err, source + ": PU " + std::to_string(pus[i].pu) + " listed twice");
      return Status::kInvalid;
    }
  }
  // Sockets ordered by OS index (ties by key, i.e. discovery order), cores by first PU: the
  // order that "socket-major" means everywhere downstream.
  std::map<std::pair<int, long>, std::map<long, std::vector<int>>> tree;
  for (const PuInfo& p : pus) {
    // A PU without a core object is its own core; negative keys keep it apart from real ones.
    long core = p.core_key >= 0 ? p.core_key : -1 - static_cast<long>(p.pu);
    int package_os = p.package_key >= 0 ? p.package_os : 0;
    tree[{package_os, p.package_key}][core].push_back(p.pu);
  }
  Machine m;
  m.source = source;
  for (auto& [key, cores] : tree) {
    Socket s;
    s.os_index = key.first;
    for (auto& [core_key, list] : cores) {
      Core c;
      c.socket = static_cast<int>(m.sockets.size());
      c.pus = std::move(list);  // ascending: pus were sorted before insertion
      s.cores.push_back(std::move(c));
    }
    std::sort(s.cores.begin(), s.cores.end(),
              [](const Core& a, const Core& b) { return a.pus.front() < b.pus.front(); });
    m.sockets.push_back(std::move(s));
  }
  *out = std::move(m);
  return Status::kOk;
}

}  // namespace internal

Status machine_load(const std::string& spec, Machine* out, std::string* err) {
  try {
    if (!spec.empty()) {
      if (!internal::hwloc_available()) {
        internal::set_err(err, "topology \"" + spec +
                                   "\": XML and synthetic topologies need hwloc "
                                   "(libhwloc.so.15), which cannot be loaded");
        return Status::kUnsupported;
      }
      return internal::hwloc_load(spec, out, err);
    }
    std::string hwloc_err;
    Status st = internal::hwloc_load("", out, &hwloc_err);
    if (st == Status::kOk) return st;
    std::string sysfs_err;
    st = internal::sysfs_load("/sys/devices/system/cpu", out, &sysfs_err);
    if (st != Status::kOk) internal::set_err(err, hwloc_err + "; " + sysfs_err);
    return st;
  } catch (const std::bad_alloc&) {
    internal::set_err(err, "topology: out of memory");
    return Status::kIoError;
  }
}

}  // namespace pw::topo
