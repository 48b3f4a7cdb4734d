// governor/machine_model: operator times from a calibration or the built-in model.
#include "governor/machine_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/key_lines.h"

namespace pw::gov {
namespace {

constexpr double kBuiltinFlopsPerS = 2.5e10;  // where cpuinfo gives no clock or vector width
constexpr double kBuiltinPeakShare = 0.8;     // of two FMA units' peak, where it does
// Wake-ups across cores in a virtual machine's guest (an IPI is a hypervisor exit).
constexpr double kGuestWakeS = 4e-5;
constexpr double kGuestNotifyS = 1.4e-5;
// What an oversubscribed team loses per operator and extra thread per core:
// a fraction of a scheduler time slice (Linux's minimum granularity is 0.75-3 ms).
constexpr double kBuiltinSliceS = 5e-5;
// A team's compute lost per core past the first, at most: oneDNN's sgemm on two
// cores of a KVM Xeon ran at 0.68-0.97 of twice its one-core rate (4e6-1e8 FLOPs).
constexpr double kBuiltinTeamLoss = 0.2;
// What a memory copy within one core's level-2 cache moves per clock cycle.
constexpr double kBuiltinCacheBytesPerCycle = 32;
constexpr int kMaxCores = 4096;
constexpr size_t kMaxRows = 64;

// The fork and join of a team of t threads whose threads are awake
// (spinning): a barrier tree, log2 t levels, and per-thread setup; for a team
// larger than the cores, a scheduler slice share per extra thread per core.
double builtin_region(int t, int cores) {
  int log2t = 0;
  while ((1 << log2t) < t) ++log2t;
  double s = 1e-6 * log2t + 4e-7 * t;
  if (t > cores) s += kBuiltinSliceS * static_cast<double>(t - cores) / cores;
  return s;
}

// builtin_region for team sizes 1..2 x cores (MachineModel::region_s).
std::vector<double> builtin_regions(int cores) {
  std::vector<double> v;
  for (int t = 1; t <= 2 * cores; ++t) v.push_back(builtin_region(t, cores));
  return v;
}

// One operator on a team of t threads whose threads are awake: the compute at
// flops_per_s per core, less kBuiltinTeamLoss of it per core past the first
// (shares that end apart, memory that the cores share), and the team's
// fork/join (builtin_region); for a team larger than the cores each extra
// thread per core also costs half the compute again (a preempted thread
// stalls the whole team at the next barrier).
double builtin_seconds(double flops, int t, int cores, double flops_per_s) {
  const int busy = std::min(t, cores);
  double s = flops / (flops_per_s * busy) * (1 + kBuiltinTeamLoss * (busy - 1) / busy);
  if (t > cores) s *= 1.0 + 0.5 * static_cast<double>(t - cores) / cores;
  return s + builtin_region(t, cores);
}

// The CPUs the OpenMP runtime compares its threads with (MachineModel::cpus).
long openmp_cpus(const MachineModel& m) {
  return m.cpus > 0 ? m.cpus : std::max(1, m.cores);
}

// The fork and join of a team of t threads (MachineModel::region_s).
double region_seconds(const MachineModel& m, int t) {
  if (m.region_s.empty()) return 0;
  return m.region_s[std::min(m.region_s.size(), static_cast<size_t>(t)) - 1];
}

bool double_parse(const char* s, const char** end, double* out) {
  char* e = nullptr;
  errno = 0;
  const double v = std::strtod(s, &e);
  if (e == s || errno != 0 || !std::isfinite(v)) return false;
  *out = v;
  *end = e;
  return true;
}

// " s1 s2 ...": at least one time in (0, 1e4] s, at most one per team size.
bool times_parse(const char* p, std::vector<double>* out) {
  const char* end = nullptr;
  while (*p == ' ') {
    double v = 0;
    if (!double_parse(p + 1, &end, &v) || v <= 0 || v > 1e4) return false;
    out->push_back(v);
    p = end;
    if (out->size() > 2 * static_cast<size_t>(kMaxCores)) return false;
  }
  return *p == '\0' && !out->empty();
}

bool row_parse(const std::string& s, SizeRow* row) {
  const char* end = nullptr;
  if (!double_parse(s.c_str(), &end, &row->flops) || row->flops < 1 || row->flops > 1e16)
    return false;
  return times_parse(end, &row->seconds);
}

// "s1 s2 ...", the region_s line's rest.
bool seconds_parse(const std::string& s, std::vector<double>* out) {
  std::vector<double> v;
  if (!times_parse((" " + s).c_str(), &v)) return false;
  *out = std::move(v);
  return true;
}

}  // namespace

CpuTraits cpu_traits_parse(const std::string& cpuinfo) {
  CpuTraits t;
  // The first CPU's block: up to the first blank line.
  const size_t end = cpuinfo.find("\n\n");
  const std::string first = cpuinfo.substr(0, end);
  auto field = [&](const char* name) -> std::string {
    size_t at = 0;
    const size_t len = strlen(name);
    while ((at = first.find(name, at)) != std::string::npos) {
      if (at == 0 || first[at - 1] == '\n') {
        size_t k = at + len;
        while (k < first.size() && (first[k] == ' ' || first[k] == '\t')) ++k;
        if (k < first.size() && first[k] == ':') {
          const size_t nl = first.find('\n', k);
          return first.substr(k + 1, nl == std::string::npos ? std::string::npos : nl - k - 1);
        }
      }
      at += len;
    }
    return "";
  };
  const std::string flags = " " + field("flags") + " ";
  auto has = [&](const char* f) {
    return flags.find(std::string(" ") + f + " ") != std::string::npos;
  };
  t.hypervisor = has("hypervisor");
  if (has("avx512f"))
    t.vector_bits = 512;
  else if (has("avx2") && has("fma"))
    t.vector_bits = 256;
  const std::string mhz = field("cpu MHz");
  char* e = nullptr;
  const double v = strtod(mhz.c_str(), &e);
  if (e != mhz.c_str() && std::isfinite(v) && v >= 100 && v <= 10000) t.mhz = v;
  return t;
}

MachineModel builtin_model(int cores, const CpuTraits& cpu) {
  MachineModel m;
  m.cores = std::max(1, cores);
  m.source = "builtin";
  double rate = kBuiltinFlopsPerS;
  if (cpu.mhz > 0 && cpu.vector_bits > 0)
    rate =
        kBuiltinPeakShare * cpu.mhz * 1e6 * 2 /* units */ * 2 /* FMA */ * (cpu.vector_bits / 32.0);
  if (cpu.hypervisor) {
    m.wake_s = kGuestWakeS;
    m.notify_s = kGuestNotifyS;
  }
  m.team_wake_s = m.wake_s;
  m.cache_bytes = std::max<int64_t>(0, cpu.l2_bytes);
  m.cache_bytes_per_s =
      cpu.mhz > 0 ? kBuiltinCacheBytesPerCycle * cpu.mhz * 1e6 : kBuiltinCacheBytesPerCycle * 1e9;
  m.region_s = builtin_regions(m.cores);
  char buf[160];
  snprintf(buf, sizeof buf, "built-in model for %d core(s), %.2g FLOP/s per core%s", m.cores, rate,
           cpu.hypervisor ? ", virtual machine's wake-up costs" : "");
  m.detail = buf;
  for (double f = 1e4; f <= 1e10; f *= 10) {
    SizeRow r;
    r.flops = f;
    for (int t = 1; t <= 2 * m.cores; ++t)
      r.seconds.push_back(builtin_seconds(f, t, m.cores, rate));
    m.rows.push_back(std::move(r));
  }
  return m;
}

bool teams_sleep(const MachineModel& m, int pools, int threads) {
  if (threads <= 1 || pools < 1) return false;
  return 1 + static_cast<long>(pools) * (threads - 1) > openmp_cpus(m);
}

double op_seconds(const MachineModel& m, double flops, double bytes, int threads,
                  bool team_asleep) {
  const int t = std::max(1, threads);
  const int busy = std::min(t, std::max(1, m.cores));
  // Bytes that fit in one core's cache come from there, each thread its share.
  const bool cached = m.cache_bytes > 0 && m.cache_bytes_per_s > 0 && bytes <= m.cache_bytes;
  const double rate = cached ? m.cache_bytes_per_s : m.bytes_per_s;
  // From memory, a team moves no more than its socket's roofline.
  const double cap = !cached && m.team_bytes_per_s_max > 0 ? m.team_bytes_per_s_max : 0.0;
  auto mem_on = [&](int k) {
    if (bytes <= 0) return 0.0;
    const double r = cap > 0 ? std::min(rate * k, cap) : rate * k;
    return bytes / r;
  };
  // A sleeping team's threads are woken by each operator, light ones too
  // (teams_sleep: when the process keeps more OpenMP threads than CPUs). A
  // team larger than the CPUs sleeps by itself: its rows were measured so (a
  // calibration) or carry the preemption it pays instead (the built-in model).
  const double wake = t > 1 && t <= openmp_cpus(m) && team_asleep ? m.team_wake_s : 0.0;
  // The compute time of a team whose times are in column col of the rows.
  auto compute_in = [&](size_t col) {
    double compute = 0;
    auto at = [&](size_t k) {
      const std::vector<double>& s = m.rows[k].seconds;
      return s[std::min(col, s.size() - 1)];
    };
    const size_t n = m.rows.size();
    size_t k = 0;
    while (k < n && m.rows[k].flops < flops) ++k;
    if (k == n) {
      // Above the largest size: its per-FLOP time.
      compute = at(n - 1) * flops / m.rows[n - 1].flops;
    } else if (m.rows[k].flops == flops) {
      compute = at(k);
    } else if (k > 0) {
      const double f0 = m.rows[k - 1].flops, f1 = m.rows[k].flops;
      compute = at(k - 1) + (at(k) - at(k - 1)) * (flops - f0) / (f1 - f0);
    } else {
      // Below the smallest size: along the line through the two smallest
      // (its intercept is the team's fixed cost), between linear and flat.
      const double f0 = m.rows[0].flops, s0 = at(0);
      double v = s0 * flops / f0;
      if (n > 1) {
        const double slope = (at(1) - s0) / (m.rows[1].flops - f0);
        v = s0 - slope * (f0 - flops);
      }
      compute = std::clamp(v, s0 * flops / f0, s0);
    }
    return compute;
  };
  const bool computes = flops > 0 && !m.rows.empty();
  double compute = 0;
  if (computes) {
    compute = compute_in(static_cast<size_t>(t) - 1);
    // A team larger than the cores has no more compute than a team of the
    // cores and more to synchronise: where a calibration measured it faster
    // (a burst of the host's load on the fitting team's cell), the fitting
    // team's time stands.
    if (t > busy) compute = std::max(compute, compute_in(static_cast<size_t>(busy) - 1));
  }
  double work = std::max(compute, mem_on(busy));
  // A team divides at best the one-thread time among its cores, and forks and
  // joins for it, also where the rows' matrix product of that size did not.
  if (t > 1 && (flops > 0 || bytes > 0)) {
    const double one = std::max(computes ? compute_in(0) : 0.0, mem_on(1));
    work = std::max(work, one / busy + region_seconds(m, t));
  }
  return m.op_overhead_s + work + wake;
}

std::string calibration_format(const Calibration& c) {
  std::string s = "parwidth-calibration 1\n";
  s += "machine " + c.machine + "\n";
  s += "budget " + c.budget + "\n";
  s += "created " + std::to_string(c.created) + "\n";
  s += "cores " + std::to_string(c.model.cores) + "\n";
  char buf[64];
  snprintf(buf, sizeof buf, "%.6g", c.model.bytes_per_s);
  s += std::string("bytes_per_s ") + buf + "\n";
  snprintf(buf, sizeof buf, "%.6g", c.model.op_overhead_s);
  s += std::string("op_overhead_s ") + buf + "\n";
  snprintf(buf, sizeof buf, "%.6g", c.model.wake_s);
  s += std::string("wake_s ") + buf + "\n";
  snprintf(buf, sizeof buf, "%.6g", c.model.notify_s);
  s += std::string("notify_s ") + buf + "\n";
  snprintf(buf, sizeof buf, "%.6g", c.model.team_wake_s);
  s += std::string("team_wake_s ") + buf + "\n";
  if (c.model.cache_bytes > 0 && c.model.cache_bytes_per_s > 0) {
    s += "cache_bytes " + std::to_string(c.model.cache_bytes) + "\n";
    snprintf(buf, sizeof buf, "%.6g", c.model.cache_bytes_per_s);
    s += std::string("cache_bytes_per_s ") + buf + "\n";
  }
  // Sockets and SMT: only what was measured; the rest stays built in.
  if (c.model.span_measured) {
    snprintf(buf, sizeof buf, "%.6g", c.model.span_factor);
    s += std::string("span_factor ") + buf + "\n";
    snprintf(buf, sizeof buf, "%.6g", c.model.span_region_s);
    s += std::string("span_region_s ") + buf + "\n";
  }
  if (c.model.socket_bytes_measured) {
    snprintf(buf, sizeof buf, "%.6g", c.model.socket_bytes_per_s);
    s += std::string("socket_bytes_per_s ") + buf + "\n";
  }
  if (c.model.smt_measured) {
    snprintf(buf, sizeof buf, "%.6g", c.model.smt_gain);
    s += std::string("smt_gain ") + buf + "\n";
  }
  if (!c.model.region_s.empty()) {
    s += "region_s";
    for (double v : c.model.region_s) {
      snprintf(buf, sizeof buf, " %.6g", v);
      s += buf;
    }
    s += "\n";
  }
  for (const SizeRow& r : c.model.rows) {
    snprintf(buf, sizeof buf, "%.6g", r.flops);
    s += std::string("size ") + buf;
    for (double v : r.seconds) {
      snprintf(buf, sizeof buf, " %.6g", v);
      s += buf;
    }
    s += "\n";
  }
  s += "end\n";
  return s;
}

Status calibration_parse(const std::string& text, const std::string& machine,
                         const std::string& budget, int64_t now, Calibration* out,
                         std::string* why) {
  auto corrupt = [&](const std::string& w) {
    *why = w;
    return Status::kCorrupt;
  };
  if (text.size() > kCalibrationMaxBytes) return corrupt("larger than 64 KiB");
  Calibration c;
  bool have_machine = false, have_budget = false, have_created = false, have_cores = false;
  bool have_team_wake = false;
  std::vector<KeyLine> lines;
  std::string framing;
  if (!key_lines_split(text, "parwidth-calibration 1", "parwidth calibration", &lines, &framing))
    return corrupt(framing);
  for (const KeyLine& l : lines) {
    const std::string& key = l.key;
    const std::string& rest = l.rest;
    const int lineno = l.lineno;
    double v = 0;
    if (key == "machine") {
      c.machine = rest;
      have_machine = true;
    } else if (key == "budget") {
      c.budget = rest;
      have_budget = true;
    } else if (key == "created") {
      if (!number_parse(rest, 0, 1e12, &v)) return corrupt("bad 'created'");
      c.created = static_cast<int64_t>(v);
      have_created = true;
    } else if (key == "cores") {
      if (!number_parse(rest, 1, kMaxCores, &v) || v != std::floor(v))
        return corrupt("bad 'cores'");
      c.model.cores = static_cast<int>(v);
      have_cores = true;
    } else if (key == "bytes_per_s") {
      if (!number_parse(rest, 1e6, 1e13, &v)) return corrupt("bad 'bytes_per_s'");
      c.model.bytes_per_s = v;
    } else if (key == "op_overhead_s") {
      if (!number_parse(rest, 0, 1e-1, &v)) return corrupt("bad 'op_overhead_s'");
      c.model.op_overhead_s = v;
    } else if (key == "wake_s") {
      if (!number_parse(rest, 0, 1e-1, &v)) return corrupt("bad 'wake_s'");
      c.model.wake_s = v;
    } else if (key == "notify_s") {
      if (!number_parse(rest, 0, 1e-1, &v)) return corrupt("bad 'notify_s'");
      c.model.notify_s = v;
    } else if (key == "team_wake_s") {
      if (!number_parse(rest, 0, 1e-1, &v)) return corrupt("bad 'team_wake_s'");
      c.model.team_wake_s = v;
      have_team_wake = true;
    } else if (key == "cache_bytes") {
      if (!number_parse(rest, 1024, 1LL << 40, &v) || v != std::floor(v))
        return corrupt("bad 'cache_bytes'");
      c.model.cache_bytes = static_cast<int64_t>(v);
    } else if (key == "cache_bytes_per_s") {
      if (!number_parse(rest, 1e6, 1e13, &v)) return corrupt("bad 'cache_bytes_per_s'");
      c.model.cache_bytes_per_s = v;
    } else if (key == "span_factor") {
      // A spanning team at most 4x slower, and never faster, than on one socket.
      if (!number_parse(rest, 1, 4, &v)) return corrupt("bad 'span_factor'");
      c.model.span_factor = v;
      c.model.span_measured = true;
    } else if (key == "span_region_s") {
      if (!number_parse(rest, 0, 1e-2, &v)) return corrupt("bad 'span_region_s'");
      c.model.span_region_s = v;
    } else if (key == "socket_bytes_per_s") {
      if (!number_parse(rest, 1e6, 1e13, &v)) return corrupt("bad 'socket_bytes_per_s'");
      c.model.socket_bytes_per_s = v;
      c.model.socket_bytes_measured = true;
    } else if (key == "smt_gain") {
      if (!number_parse(rest, 0, 1, &v)) return corrupt("bad 'smt_gain'");
      c.model.smt_gain = v;
      c.model.smt_measured = true;
    } else if (key == "region_s") {
      if (!seconds_parse(rest, &c.model.region_s)) return corrupt("bad 'region_s'");
    } else if (key == "size") {
      SizeRow r;
      if (!row_parse(rest, &r)) return corrupt("bad 'size' line " + std::to_string(lineno));
      if (!c.model.rows.empty() && (r.flops <= c.model.rows.back().flops ||
                                    r.seconds.size() != c.model.rows.back().seconds.size()))
        return corrupt("'size' lines out of order or of different team counts");
      if (c.model.rows.size() >= kMaxRows) return corrupt("too many 'size' lines");
      c.model.rows.push_back(std::move(r));
    }
    // Unknown keys are skipped: a later version may add some.
  }
  if (!have_machine || !have_budget || !have_created || !have_cores || c.model.rows.empty())
    return corrupt("missing machine, budget, created, cores or size lines");
  // A calibration from before team_wake_s: its teams paid wake_s, as they did then.
  if (!have_team_wake) c.model.team_wake_s = c.model.wake_s;
  // One from before region_s: the built-in model's fork and join.
  if (c.model.region_s.empty()) c.model.region_s = builtin_regions(c.model.cores);
  // One without the cache's rate moves every byte at bytes_per_s.
  if (c.model.cache_bytes_per_s <= 0) c.model.cache_bytes = 0;
  if (c.model.rows[0].seconds.size() < static_cast<size_t>(c.model.cores))
    return corrupt("fewer team sizes than cores");
  if (c.machine != machine) {
    *why = "measured on '" + c.machine + "'";
    return Status::kOtherMachine;
  }
  if (c.budget != budget) {
    *why = "measured for budget '" + c.budget + "'";
    return Status::kOtherBudget;
  }
  if (c.created > now + 300 || now - c.created > kCalibrationMaxAge) {
    *why = "measured at " + std::to_string(c.created) + ", now " + std::to_string(now);
    return Status::kStale;
  }
  c.model.source = "calibration";
  c.model.detail = "calibration measured at " + std::to_string(c.created);
  *out = std::move(c);
  return Status::kOk;
}

}  // namespace pw::gov
