// cgroup v2 limits: where this process's cgroup is, and the cpuset and cpu.max quota it is under.
//
// cgroup v1 is read by cgroup_self_limits for its cpu quota only (cgroup_v1.cpp): a v1 cpuset
// already shows in sched_getaffinity.
#include <stdlib.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo {

namespace internal {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::vector<CgroupLine> proc_cgroup_parse(const std::string& proc_cgroup) {
  std::vector<CgroupLine> out;
  for (const std::string& line : split(proc_cgroup, '\n')) {
    const size_t a = line.find(':');
    if (a == std::string::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

std::vector<MountEntry> mountinfo_parse(const std::string& mountinfo) {
  std::vector<MountEntry> out;
  for (const std::string& line : split(mountinfo, '\n')) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::vector<std::string> tail = split(line.substr(dash + 3), ' ');
    if (tail.empty()) continue;
    std::vector<std::string> head = split(line.substr(0, dash), ' ');
    if (head.size() < 5) continue;
    MountEntry m;
    m.root = mount_unescape(head[3]);
    m.point = mount_unescape(head[4]);
    m.fstype = tail[0];
    if (tail.size() >= 3) m.super_opts = tail[2];
    out.push_back(std::move(m));
  }
  return out;
}

std::string cgroup_path_under(const std::string& path, const std::string& root) {
  if (root != "/" && path.compare(0, root.size(), root) == 0 &&
      (path.size() == root.size() || path[root.size()] == '/'))
    return path.substr(root.size());
  return path;
}

Status cgroup_dir_from(const std::string& proc_cgroup, const std::string& mountinfo,
                       std::string* dir, std::string* err) {
  // /proc/self/cgroup: "hierarchy:controllers:path"; the v2 line is "0::/path".
  std::string path;
  bool found = false;
  for (const CgroupLine& l : proc_cgroup_parse(proc_cgroup)) {
    if (l.hierarchy == "0" && l.controllers.empty()) {
      path = l.path;
      found = true;
      break;
    }
  }
  if (!found || path.empty() || path[0] != '/') {
    err_set(err, "cgroup: no cgroup v2 hierarchy in /proc/self/cgroup");
    return Status::kUnsupported;
  }
  // Prefer the usual /sys/fs/cgroup mount when there are several.
  std::string mount, mount_root;
  for (const MountEntry& m : mountinfo_parse(mountinfo)) {
    if (m.fstype != "cgroup2") continue;
    if (mount.empty() || m.point == "/sys/fs/cgroup") {
      mount = m.point;
      mount_root = m.root;
    }
  }
  if (mount.empty()) {
    err_set(err, "cgroup: no cgroup2 file system in /proc/self/mountinfo");
    return Status::kUnsupported;
  }
  path = cgroup_path_under(path, mount_root);
  if (path == "/" || path.empty()) {
    *dir = mount;
  } else {
    *dir = (mount == "/" ? "" : mount) + path;
  }
  return Status::kOk;
}

Status cpu_max_parse(const std::string& text, double* cpus, std::string* err) {
  std::vector<std::string> f;
  for (const std::string& w : split(trim(text), ' ')) {
    if (!w.empty()) f.push_back(w);
  }
  if (f.size() >= 1 && f.size() <= 2 && (f.size() == 1 || all_digits(f[1]))) {
    long period = f.size() == 2 ? atol(f[1].c_str()) : 100000;
    if (f[0] == "max" && period > 0) {
      *cpus = 0;
      return Status::kOk;
    }
    if (f.size() == 2 && all_digits(f[0]) && period > 0 && atol(f[0].c_str()) > 0) {
      *cpus = static_cast<double>(atol(f[0].c_str())) / static_cast<double>(period);
      return Status::kOk;
    }
  }
  err_set(err, "\"" + one_line(text) + "\" is not \"max [period]\" or \"quota period\"");
  return Status::kInvalid;
}

}  // namespace internal

Status cgroup_self_dir(std::string* dir, std::string* err) {
  try {
    std::string cg, mi;
    Status st = internal::file_read("/proc/self/cgroup", &cg, err);
    if (st == Status::kUnsupported) {
      internal::err_set(err, "cgroup: /proc/self/cgroup does not exist");
      return st;
    }
    if (st != Status::kOk) return st;
    st = internal::file_read("/proc/self/mountinfo", &mi, err);
    if (st == Status::kUnsupported) {
      internal::err_set(err, "cgroup: /proc/self/mountinfo does not exist");
      return st;
    }
    if (st != Status::kOk) return st;
    return internal::cgroup_dir_from(cg, mi, dir, err);
  } catch (const std::bad_alloc&) {
    internal::err_set(err, "cgroup: out of memory");
    return Status::kIoError;
  }
}

Status cgroup_read(const std::string& leaf_dir, CgroupLimits* out, std::string* err) {
  try {
    // A directory that is not there (a path from outside a container's view) holds no limits we
    // could honour; saying "unlimited" would be a guess.
    if (!internal::path_exists(leaf_dir)) {
      internal::err_set(err, "cgroup: " + leaf_dir + " does not exist");
      return Status::kUnsupported;
    }
    CgroupLimits lim;
    std::string text;
    std::string path = leaf_dir + "/cpuset.cpus.effective";
    Status st = internal::file_read(path, &text, err);
    if (st == Status::kOk) {
      std::string perr;
      st = cpulist_parse(text, &lim.cpuset, &perr);
      if (st != Status::kOk) {
        internal::err_set(err, path + ": " + perr);
        return st;
      }
      // An empty effective set is what a cgroup without the cpuset controller can show: no limit.
      lim.have_cpuset = !lim.cpuset.empty();
      if (lim.have_cpuset) lim.cpuset_from = path;
    } else if (st != Status::kUnsupported) {
      return st;
    }
    // Every ancestor's cpu.max binds too; stop where the cgroup file system ends.
    for (std::string dir = leaf_dir; !dir.empty();) {
      path = dir + "/cpu.max";
      st = internal::file_read(path, &text, err);
      if (st == Status::kOk) {
        double cpus = 0;
        std::string perr;
        if (internal::cpu_max_parse(text, &cpus, &perr) != Status::kOk) {
          internal::err_set(err, path + ": " + perr);
          return Status::kInvalid;
        }
        if (cpus > 0 && (lim.quota_cpus == 0 || cpus < lim.quota_cpus)) {
          lim.quota_cpus = cpus;
          lim.quota_from = path;
        }
      } else if (st != Status::kUnsupported) {
        return st;
      }
      std::string parent = internal::parent_of(dir);
      if (parent.empty() || parent == dir || !internal::path_exists(parent + "/cgroup.controllers"))
        break;
      dir = parent;
    }
    *out = std::move(lim);
    return Status::kOk;
  } catch (const std::bad_alloc&) {
    internal::err_set(err, "cgroup: out of memory");
    return Status::kIoError;
  }
}

}  // namespace pw::topo
