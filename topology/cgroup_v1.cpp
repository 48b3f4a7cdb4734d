// cgroup v1's cpu quota (cpu.cfs_quota_us), for hosts where the cpu controller is still on v1:
// docker --cpus and Kubernetes CPU limits on older hosts land there.
#include <stdlib.h>

#include <new>

#include "topology/internal.h"

namespace pw::topo {

namespace internal {

namespace {

bool has_word(const std::string& list, const char* word) {
  for (const std::string& w : split(list, ',')) {
    if (w == word) return true;
  }
  return false;
}

// One integer file (quota may be -1). kUnsupported when missing.
Status long_read(const std::string& path, long* v, std::string* err) {
  std::string text;
  Status st = file_read(path, &text, err);
  if (st != Status::kOk) return st;
  std::string t = trim(text);
  char* end = nullptr;
  long x = strtol(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0') {
    err_set(err, path + ": \"" + one_line(t) + "\" is not a number");
    return Status::kInvalid;
  }
  *v = x;
  return Status::kOk;
}

}  // namespace

Status cgroup_v1_cpu_dir_from(const std::string& proc_cgroup, const std::string& mountinfo,
                              std::string* dir, std::string* mount, std::string* err) {
  std::string path;
  bool found = false;
  for (const CgroupLine& l : proc_cgroup_parse(proc_cgroup)) {
    if (l.hierarchy != "0" && has_word(l.controllers, "cpu")) {
      path = l.path;
      found = true;
      break;
    }
  }
  if (!found || path.empty() || path[0] != '/') {
    err_set(err, "cgroup v1: no cpu controller in /proc/self/cgroup");
    return Status::kUnsupported;
  }
  std::string point, root;
  for (const MountEntry& m : mountinfo_parse(mountinfo)) {
    if (m.fstype != "cgroup" || !has_word(m.super_opts, "cpu")) continue;
    point = m.point;
    root = m.root;
    break;
  }
  if (point.empty()) {
    err_set(err, "cgroup v1: no cpu controller mount in /proc/self/mountinfo");
    return Status::kUnsupported;
  }
  path = cgroup_path_under(path, root);
  *dir = (path == "/" || path.empty()) ? point : point + path;
  *mount = point;
  return Status::kOk;
}

Status cgroup_v1_quota_read(const std::string& dir, const std::string& mount, CgroupLimits* lim,
                            std::string* err) {
  if (!path_exists(dir)) {
    err_set(err, "cgroup v1: " + dir + " does not exist");
    return Status::kUnsupported;
  }
  double best = lim->quota_cpus;
  std::string from = lim->quota_from;
  for (std::string d = dir;;) {
    std::string qpath = d + "/cpu.cfs_quota_us";
    long quota = -1, period = 0;
    Status st = long_read(qpath, &quota, err);
    if (st == Status::kOk && quota != -1) {
      st = long_read(d + "/cpu.cfs_period_us", &period, err);
      if (st == Status::kUnsupported) {
        err_set(err, d + "/cpu.cfs_period_us: missing beside cpu.cfs_quota_us");
        return Status::kInvalid;
      }
      if (st != Status::kOk) return st;
      if (quota <= 0 || period <= 0) {
        err_set(err, qpath + ": quota " + std::to_string(quota) + " / period " +
                         std::to_string(period) + " makes no sense");
        return Status::kInvalid;
      }
      double cpus = static_cast<double>(quota) / static_cast<double>(period);
      if (best == 0 || cpus < best) {
        best = cpus;
        from = qpath;
      }
    } else if (st != Status::kOk && st != Status::kUnsupported) {
      return st;
    }
    // v1 has no marker of where the hierarchy ends but its mount point.
    if (d == mount || d.size() <= mount.size()) break;
    d = parent_of(d);
  }
  lim->quota_cpus = best;
  lim->quota_from = from;
  return Status::kOk;
}

}  // namespace internal

Status cgroup_self_limits(CgroupLimits* out, std::string* err) {
  try {
    std::string cg, mi;
    Status st = internal::file_read("/proc/self/cgroup", &cg, err);
    if (st == Status::kOk) st = internal::file_read("/proc/self/mountinfo", &mi, err);
    if (st == Status::kUnsupported) {
      internal::err_set(err, "cgroup: /proc/self/cgroup or mountinfo does not exist");
      return st;
    }
    if (st != Status::kOk) return st;
    CgroupLimits lim;
    bool any = false;
    std::string dir, v2_err;
    if (internal::cgroup_dir_from(cg, mi, &dir, &v2_err) == Status::kOk) {
      st = cgroup_read(dir, &lim, &v2_err);
      if (st == Status::kOk) {
        any = true;
      } else if (st != Status::kUnsupported) {
        internal::err_set(err, v2_err);
        return st;
      }
    }
    // A controller lives in one hierarchy only; on hybrid hosts the cpu quota is usually here.
    std::string mount, v1_err;
    if (internal::cgroup_v1_cpu_dir_from(cg, mi, &dir, &mount, &v1_err) == Status::kOk) {
      st = internal::cgroup_v1_quota_read(dir, mount, &lim, &v1_err);
      if (st == Status::kOk) {
        any = true;
      } else if (st != Status::kUnsupported) {
        internal::err_set(err, v1_err);
        return st;
      }
    }
    if (!any) {
      internal::err_set(err, v2_err.empty() ? v1_err : v2_err + "; " + v1_err);
      return Status::kUnsupported;
    }
    *out = std::move(lim);
    return Status::kOk;
  } catch (const std::bad_alloc&) {
    internal::err_set(err, "cgroup: out of memory");
    return Status::kIoError;
  }
}

}  // namespace pw::topo
