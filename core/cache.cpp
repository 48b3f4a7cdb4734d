// core/cache: the user's cache on disk (calibrations, measured plans): capped reads,
// atomic private writes.
#include "core/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <new>

namespace pw::cache {
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// mkdir -p with 0700 for the last component; true if dir is then a real
// directory owned by us.
bool dir_ensure(const std::string& dir, std::string* why) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      *why = "cannot create " + part + ": " + strerror(errno);
      return false;
    }
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    *why = dir + ": " + strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *why = dir + " is not a directory (a symlink is refused)";
    return false;
  }
  if (st.st_uid != geteuid()) {
    *why = dir + " belongs to another user";
    return false;
  }
  return true;
}

}  // namespace

std::string cache_dir(const opt::EnvLookup& env) {
  const char* xdg = env("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/parwidth";
  const char* home = env("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/parwidth";
  return "";
}

// A machine described by a synthetic or XML topology, not this one.
namespace {
bool described(const topo::Machine& m) {
  return m.source.rfind("synthetic:", 0) == 0 || m.source.rfind("xml:", 0) == 0;
}
}  // namespace

std::string machine_id(const topo::Machine& m) {
  std::string cpu;
  std::string text, why;
  if (file_read_capped("/proc/cpuinfo", 1 << 20, &text, &why) || !text.empty()) {
    const size_t at = text.find("model name");
    if (at != std::string::npos) {
      const size_t colon = text.find(':', at);
      const size_t nl = text.find('\n', at);
      if (colon != std::string::npos && colon < nl) {
        cpu = text.substr(colon + 1, nl == std::string::npos ? std::string::npos : nl - colon - 1);
        while (!cpu.empty() && cpu.front() == ' ') cpu.erase(cpu.begin());
      }
    }
  }
  if (described(m)) cpu = m.source;
  if (cpu.empty()) cpu = "unknown cpu";
  size_t pus = 0, cores = 0;
  for (const topo::Socket& s : m.sockets) {
    cores += s.cores.size();
    for (const topo::Core& c : s.cores) pus += c.pus.size();
  }
  return cpu + " | " + std::to_string(m.sockets.size()) + " sockets " + std::to_string(cores) +
         " cores " + std::to_string(pus) + " pus";
}

std::string budget_id(const topo::Budget& b) {
  char quota[32] = "none";
  if (b.quota_cpus > 0) snprintf(quota, sizeof quota, "%.2f", b.quota_cpus);
  // The budget's shape, not its CPU numbers: jobs get other CPUs of the same
  // machine each time (Slurm, containers), and what is measured (team scaling,
  // wake-ups across cores, cross-socket teams) depends on how many cores, on
  // how many sockets, with how many PUs, under which quota.
  std::string shape;
  for (size_t i = 0; i < b.sockets.size(); ++i)
    shape += (i ? "+" : "") + std::to_string(b.sockets[i].cores.size());
  return "cores " + (shape.empty() ? std::to_string(b.cores) : shape) + " pus " +
         std::to_string(b.cpus.size()) + " quota " + quota;
}

std::string calibration_name(const std::string& machine, const std::string& budget) {
  char buf[64];
  snprintf(buf, sizeof buf, "calibration-%016llx.txt",
           static_cast<unsigned long long>(fnv1a(machine + "\n" + budget)));
  return buf;
}

namespace {

// Reads fd to its end into *out (at most max_bytes); false with *why. May throw bad_alloc.
bool fd_read_all(int fd, size_t size_hint, size_t max_bytes, std::string* out, std::string* why) {
  // Straight into the string: a model file is up to 2 GiB.
  out->resize(std::min(max_bytes, size_hint > 0 ? size_hint : size_t{8192}));
  size_t have = 0;
  for (;;) {
    if (have == out->size()) {
      if (have >= max_bytes) {
        char probe;
        ssize_t n;
        do n = read(fd, &probe, 1);
        while (n < 0 && errno == EINTR);
        if (n == 0) break;
        *why = n < 0 ? strerror(errno) : "larger than " + std::to_string(max_bytes) + " bytes";
        return false;
      }
      out->resize(std::min(max_bytes, have * 2));
    }
    const ssize_t n = read(fd, &(*out)[have], out->size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = strerror(errno);
      return false;
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  out->resize(have);
  return true;
}

}  // namespace

bool file_read_capped(const std::string& path, size_t max_bytes, std::string* out, std::string* why,
                      Links links) {
  out->clear();
  const int fd = open(
      path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (links == Links::kRefuse ? O_NOFOLLOW : 0));
  if (fd < 0) {
    *why = errno == ELOOP && links == Links::kRefuse ? "a symlink (refused)" : strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) {
    *why = strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    *why = S_ISDIR(st.st_mode) ? "a directory" : "not a regular file";
    ok = false;
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *why = "larger than " + std::to_string(max_bytes) + " bytes";
    ok = false;
  }
  if (ok) {
    try {
      // /proc files report size 0: they are read in growing pieces.
      ok = fd_read_all(fd, static_cast<size_t>(st.st_size), max_bytes, out, why);
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      ok = false;
    }
  }
  close(fd);
  if (!ok) out->clear();
  return ok;
}

bool file_write_atomic(const std::string& dir, const std::string& name, const std::string& text,
                       std::string* why) {
  if (!dir_ensure(dir, why)) return false;
  // Unique per process and per call: writers in other processes and threads
  // never share a temporary file.
  static std::atomic<unsigned> serial{0};
  char suffix[64];
  snprintf(suffix, sizeof suffix, ".tmp.%ld.%u", static_cast<long>(getpid()),
           serial.fetch_add(1, std::memory_order_relaxed));
  const std::string tmp = dir + "/" + name + suffix;
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = "cannot create " + tmp + ": " + strerror(errno);
    return false;
  }
  size_t at = 0;
  bool ok = true;
  while (at < text.size()) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = std::string("write: ") + strerror(errno);
      ok = false;
      break;
    }
    at += static_cast<size_t>(n);
  }
  if (ok && fsync(fd) != 0) {
    *why = std::string("fsync: ") + strerror(errno);
    ok = false;
  }
  if (close(fd) != 0 && ok) {
    *why = std::string("close: ") + strerror(errno);
    ok = false;
  }
  if (ok && rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    *why = std::string("rename: ") + strerror(errno);
    ok = false;
  }
  if (!ok) unlink(tmp.c_str());
  return ok;
}

gov::CpuTraits cpu_traits(const topo::Machine& m) {
  if (described(m)) return {};
  // The first CPU's block is at the start: 16 KiB holds it, and the kernel
  // then formats only the first few CPUs' text.
  std::string text, why;
  file_read_capped("/proc/cpuinfo", 16 << 10, &text, &why);
  gov::CpuTraits t = gov::cpu_traits_parse(text);
  // The first PU's core stands for all: a budget's cores are of one kind, bar
  // hybrid parts, where this is whichever kind CPU 0 is.
  int first = 0;
  if (!m.sockets.empty() && !m.sockets[0].cores.empty() && !m.sockets[0].cores[0].pus.empty())
    first = m.sockets[0].cores[0].pus[0];
  int64_t l2 = 0;
  if (topo::l2_cache_per_core(topo::kSysfsCpuRoot, first, &l2, nullptr) == Status::kOk)
    t.l2_bytes = l2;
  return t;
}

gov::MachineModel calibration_load(const std::string& dir, const std::string& machine,
                                   const std::string& budget, int cores, const gov::CpuTraits& cpu,
                                   int64_t now, bool* found, std::string* warning) {
  *found = false;
  warning->clear();
  auto builtin = [cores, &cpu] { return gov::builtin_model(cores, cpu); };
  if (dir.empty()) return builtin();
  const std::string path = dir + "/" + calibration_name(machine, budget);
  std::string text, why;
  if (!file_read_capped(path, gov::kCalibrationMaxBytes, &text, &why)) {
    if (why != strerror(ENOENT))
      *warning = "calibration " + path + " unreadable (" + why + "); using the built-in model";
    return builtin();
  }
  gov::Calibration c;
  const Status st = gov::calibration_parse(text, machine, budget, now, &c, &why);
  if (st != Status::kOk) {
    *warning = "calibration " + path + " " + status_name(st) + " (" + why +
               "); using the built-in model (rerun `parwidth calibrate`)";
    return builtin();
  }
  *found = true;
  c.model.detail += " (" + path + ")";
  return c.model;
}

bool dir_make(const std::string& dir, std::string* why) {
  return dir_ensure(dir, why);
}

std::string plan_file_name(const std::string& machine, const std::string& budget,
                           const std::string& graph) {
  // The fingerprint in clear (`parwidth plans --forget FINGERPRINT` finds it by
  // name); anything but hex digits is replaced so a name never leaves dir.
  std::string g;
  for (char c : graph.substr(0, 32)) g += isxdigit(static_cast<unsigned char>(c)) ? c : '_';
  char buf[96];
  snprintf(buf, sizeof buf, "plan-%s-%016llx.txt", g.c_str(),
           static_cast<unsigned long long>(fnv1a(machine + "\n" + budget)));
  return buf;
}

gov::MeasuredPlan measured_load(const std::string& dir, const std::string& machine,
                                const std::string& budget, const std::string& graph, int64_t now,
                                std::string* warning) {
  warning->clear();
  if (dir.empty() || graph.empty()) return {};
  const std::string path = dir + "/" + plan_file_name(machine, budget, graph);
  std::string text, why;
  if (!file_read_capped(path, gov::kPlanFileMaxBytes, &text, &why)) {
    if (why != strerror(ENOENT))
      *warning = "measured plan " + path + " unreadable (" + why +
                 "); planning without it (`parwidth plans --forget " + graph + "` removes it)";
    return {};
  }
  gov::StoredPlan s;
  const Status st = gov::plan_file_parse(text, machine, budget, graph, now, &s, &why);
  if (st != Status::kOk) {
    *warning = "measured plan " + path + " " + status_name(st) + " (" + why +
               "); planning without it (`parwidth plans --forget " + graph + "` removes it)";
    return {};
  }
  return s.plan;
}

bool measured_store(const std::string& dir, const gov::StoredPlan& s, std::string* path,
                    std::string* why) {
  if (dir.empty()) return *why = "no cache directory (set XDG_CACHE_HOME or HOME)", false;
  const std::string name = plan_file_name(s.machine, s.budget, s.graph);
  if (!file_write_atomic(dir, name, gov::plan_file_format(s), why)) return false;
  *path = dir + "/" + name;
  return true;
}

std::vector<PlanFile> plan_files(const std::string& dir, int64_t now) {
  std::vector<PlanFile> out;
  if (dir.empty()) return out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (const struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    // Temporary files of a writer in progress end in .tmp.<pid>.<n>: not plans yet.
    if (name.rfind("plan-", 0) != 0 || name.size() < 9 ||
        name.compare(name.size() - 4, 4, ".txt") != 0)
      continue;
    PlanFile f;
    f.name = name;
    f.path = dir + "/" + name;
    std::string text;
    if (!file_read_capped(f.path, gov::kPlanFileMaxBytes, &text, &f.why)) {
      f.why = "unreadable: " + f.why;
    } else {
      f.status = gov::plan_file_parse(text, "", "", "", now, &f.stored, &f.why);
    }
    out.push_back(std::move(f));
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const PlanFile& a, const PlanFile& b) { return a.name < b.name; });
  return out;
}

}  // namespace pw::cache
