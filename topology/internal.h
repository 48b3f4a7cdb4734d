// topology/ internals shared by its files and its unit tests; not part of the interface.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace pw::topo::internal {

// Reads a small text file whole. kUnsupported: it does not exist (ENOENT/ENOTDIR), which callers
// treat as "this limit is not configured"; kIoError: it exists and cannot be read.
Status file_read(const std::string& path, std::string* out, std::string* err);
bool path_exists(const std::string& path);

// Linux's largest configurable CPU count: no real machine has more PUs.
inline constexpr long kMaxPus = 8192;

// One PU as a backend saw it. Keys identify the PU's package and core within one load (-1 when
// the backend has no such object: the PU is then its own core, the machine one socket).
struct PuInfo {
  int pu = 0;
  long package_key = -1;
  int package_os = 0;
  long core_key = -1;
};
// Groups PUs into sockets (by package OS index) -> cores (ascending by first PU) -> PUs.
Status machine_build(std::vector<PuInfo> pus, const std::string& source, Machine* out,
                     std::string* err);

// hwloc, dlopen'ed once per process. kUnsupported when libhwloc.so.15 cannot be loaded.
// spec: "" = this machine, "synthetic:<desc>", else an XML path.
Status hwloc_load(const std::string& spec, Machine* out, std::string* err);
bool hwloc_available();

// sysfs backend; root is normally "/sys/devices/system/cpu".
Status sysfs_load(const std::string& root, Machine* out, std::string* err);

// One line of /proc/self/cgroup: "hierarchy:controllers:path" (the path may contain ':').
struct CgroupLine {
  std::string hierarchy;    // "0" for cgroup v2
  std::string controllers;  // "" for cgroup v2, else "cpu,cpuacct", ...
  std::string path;
};
// The lines with at least two ':'; others are skipped.
std::vector<CgroupLine> proc_cgroup_parse(const std::string& proc_cgroup);

// One line of /proc/self/mountinfo: "id parent maj:min root mountpoint opts [optional...] -
// fstype source superopts", root and mount point unescaped.
struct MountEntry {
  std::string root;
  std::string point;
  std::string fstype;
  std::string super_opts;  // "" when the line has none
};
// The lines that have the fields above; others are skipped.
std::vector<MountEntry> mountinfo_parse(const std::string& mountinfo);
// A cgroup path as seen from a mount of the sub-tree `root` (a container's bind mount without
// a cgroup namespace shows the process's path from the real root): that part stripped.
std::string cgroup_path_under(const std::string& path, const std::string& root);

// /proc/self/cgroup and /proc/self/mountinfo contents -> the process's cgroup v2 directory.
Status cgroup_dir_from(const std::string& proc_cgroup, const std::string& mountinfo,
                       std::string* dir, std::string* err);
// cgroup v1's cpu controller: its directory for this process, and the mount point where the
// upward walk stops.
Status cgroup_v1_cpu_dir_from(const std::string& proc_cgroup, const std::string& mountinfo,
                              std::string* dir, std::string* mount, std::string* err);
// Lowers lim->quota_cpus with every cpu.cfs_quota_us / cpu.cfs_period_us from dir up to mount.
Status cgroup_v1_quota_read(const std::string& dir, const std::string& mount, CgroupLimits* lim,
                            std::string* err);
// One cpu.max file's content -> cpus (0 = "max", no cap).
Status cpu_max_parse(const std::string& text, double* cpus, std::string* err);

std::vector<std::string> split(const std::string& s, char sep);
std::string trim(const std::string& s);
std::string mount_unescape(const std::string& s);
std::string parent_of(const std::string& dir);
// File content quoted in an error: one line, at most 64 characters.
std::string one_line(const std::string& text);

inline void err_set(std::string* err, const std::string& msg) {
  if (err) *err = msg;
}

}  // namespace pw::topo::internal
