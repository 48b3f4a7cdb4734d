// machine_load: picks a backend for a spec, and the one grouping of PUs that every backend shares.
#include <algorithm>
#include <map>
#include <new>
#include <string>

#include "topology/internal.h"

namespace pw::topo {

namespace internal {

Status machine_build(std::vector<PuInfo> pus, const std::string& source, Machine* out,
                     std::string* err) {
  if (pus.empty()) {
    err_set(err, source + ": no processing units found");
    return Status::kInvalid;
  }
  std::sort(pus.begin(), pus.end(), [](const PuInfo& a, const PuInfo& b) { return a.pu < b.pu; });
  for (size_t i = 1; i < pus.size(); ++i) {
    if (pus[i].pu == pus[i - 1].pu) {
      err_set(err, source + ": PU " + std::to_string(pus[i].pu) + " listed twice");
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

namespace {

// No real machine has more than internal::kMaxPus PUs, and hwloc builds every
// object of a synthetic description in memory (16x64x64 took 8 s and 750 MB).
constexpr long kMaxSyntheticPus = internal::kMaxPus;

// The number of PUs a synthetic description asks for: the product of its
// levels' counts ("package:2 core:24 pu:2" -> 96), saturating above the cap;
// 0 when a level has no count (hwloc then refuses it).
long synthetic_pus(const std::string& desc) {
  long pus = 1;
  size_t i = 0;
  bool any = false;
  while (i < desc.size()) {
    const size_t colon = desc.find(':', i);
    if (colon == std::string::npos) break;
    size_t j = colon + 1;
    long n = 0;
    while (j < desc.size() && desc[j] >= '0' && desc[j] <= '9') {
      n = n * 10 + (desc[j] - '0');
      if (n > kMaxSyntheticPus) n = kMaxSyntheticPus + 1;
      ++j;
    }
    if (j == colon + 1) return 0;
    any = true;
    pus = std::min(pus * std::max(n, 1L), kMaxSyntheticPus + 1);
    // The next level starts after the spaces that follow this one's attributes.
    const size_t space = desc.find(' ', j);
    i = space == std::string::npos ? desc.size() : space + 1;
  }
  return any ? pus : 0;
}

}  // namespace

Status machine_load(const std::string& spec, Machine* out, std::string* err) {
  try {
    if (!spec.empty()) {
      if (!internal::hwloc_available()) {
        internal::err_set(err, "topology \"" + spec +
                                   "\": XML and synthetic topologies need hwloc "
                                   "(libhwloc.so.15), which cannot be loaded");
        return Status::kUnsupported;
      }
      static const std::string kSynthetic = "synthetic:";
      if (spec.compare(0, kSynthetic.size(), kSynthetic) == 0 &&
          synthetic_pus(spec.substr(kSynthetic.size())) > kMaxSyntheticPus) {
        internal::err_set(err, "topology \"" + spec + "\": more than " +
                                   std::to_string(kMaxSyntheticPus) + " PUs");
        return Status::kInvalid;
      }
      return internal::hwloc_load(spec, out, err);
    }
    std::string hwloc_err;
    Status st = internal::hwloc_load("", out, &hwloc_err);
    if (st == Status::kOk) return st;
    std::string sysfs_err;
    st = internal::sysfs_load(kSysfsCpuRoot, out, &sysfs_err);
    if (st != Status::kOk) internal::err_set(err, hwloc_err + "; " + sysfs_err);
    return st;
  } catch (const std::bad_alloc&) {
    internal::err_set(err, "topology: out of memory");
    return Status::kIoError;
  }
}

}  // namespace pw::topo
