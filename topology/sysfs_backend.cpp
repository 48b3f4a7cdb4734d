// The sysfs backend: the fallback when hwloc cannot be loaded, reading what the kernel exports
// under /sys/devices/system/cpu (a parameter, so tests use a fixture tree).
#include <stdlib.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo::internal {

namespace {

// One integer file. Missing is reported as kUnsupported so the caller can degrade.
Status int_read(const std::string& path, long* v, std::string* err) {
  std::string text;
  Status st = file_read(path, &text, err);
  if (st != Status::kOk) return st;
  char* end = nullptr;
  const char* s = text.c_str();
  long x = strtol(s, &end, 10);
  while (end && (*end == '\n' || *end == ' ')) ++end;
  if (end == s || *end != '\0') {
    err_set(err, path + ": not a number");
    return Status::kInvalid;
  }
  *v = x;
  return Status::kOk;
}

}  // namespace

Status sysfs_load(const std::string& root, Machine* out, std::string* err) {
  std::string source = "sysfs";
  std::string text;
  std::string online_path = root + "/online";
  Status st = file_read(online_path, &text, err);
  if (st == Status::kUnsupported) {
    err_set(err, "sysfs: " + online_path + " does not exist");
    return Status::kUnsupported;
  }
  if (st != Status::kOk) return st;
  std::vector<int> online;
  st = cpulist_parse(text, &online, err);
  if (st != Status::kOk) return st;

  std::vector<PuInfo> pus;
  pus.reserve(online.size());
  for (int cpu : online) {
    std::string dir = root + "/cpu" + std::to_string(cpu) + "/topology/";
    PuInfo p;
    p.pu = cpu;
    long pkg = -1, core = -1;
    // Some kernels (s390 guests, odd VMs) lack the topology directory: then each CPU is its own
    // core on one socket, which is what hwloc reports there too.
    st = int_read(dir + "physical_package_id", &pkg, err);
    if (st != Status::kOk && st != Status::kUnsupported) return st;
    st = int_read(dir + "core_id", &core, err);
    if (st != Status::kOk && st != Status::kUnsupported) return st;
    // physical_package_id is -1 on some architectures: no package information.
    if (pkg >= 0) {
      p.package_key = pkg;
      p.package_os = static_cast<int>(pkg);
    }
    // core_id is unique within a package only; key it by (package, core).
    if (core >= 0) p.core_key = (pkg >= 0 ? pkg : 0) * (1L << 24) + core;
    pus.push_back(p);
  }
  return machine_build(std::move(pus), source, out, err);
}

}  // namespace pw::topo::internal
