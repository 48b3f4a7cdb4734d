// governor/plan_store: the stored measured plan's file format and its validation.
#include "governor/plan_store.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "base/key_lines.h"

namespace pw::gov {
namespace {

constexpr const char kHeader[] = "parwidth-plan 1";

bool int_parse(const std::string& s, double lo, double hi, int64_t* out) {
  double v = 0;
  if (!number_parse(s, lo, hi, &v) || v != std::floor(v)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// One line of text: a newline inside a value would start a new key.
std::string one_line(const std::string& s) {
  std::string r = s;
  for (char& c : r)
    if (c == '\n' || c == '\r') c = ' ';
  return r;
}

std::string num(double v) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string utc_text(int64_t t) {
  const time_t tt = static_cast<time_t>(t);
  struct tm tm;
  if (!gmtime_r(&tt, &tm)) return std::to_string(t);
  char buf[40];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string measured_describe(const MeasuredPlan& m) {
  const bool wall = m.metric.empty() || m.metric == "wall seconds";
  char buf[160];
  const double spread = m.seconds > 0 ? 100.0 * (m.max - m.min) / m.seconds : 0;
  snprintf(buf, sizeof buf, ", %d run%s, median %.6g%s (spread %.0f%%)", m.runs,
           m.runs == 1 ? "" : "s", m.seconds, wall ? " s" : " (--metric)", spread);
  return "parwidth " + m.by + ", " + utc_text(m.created) + buf;
}

std::string plan_file_format(const StoredPlan& s) {
  const MeasuredPlan& m = s.plan;
  std::string t = std::string(kHeader) + "\n";
  t += "machine " + one_line(s.machine) + "\n";
  t += "budget " + one_line(s.budget) + "\n";
  t += "graph " + one_line(s.graph) + "\n";
  t += "created " + std::to_string(m.created) + "\n";
  t += "by " + one_line(m.by) + "\n";
  t += "version " + one_line(m.version) + "\n";
  t += "metric " + one_line(m.metric.empty() ? "wall seconds" : m.metric) + "\n";
  t += "pools " + std::to_string(m.pools) + "\n";
  t += "intra " + std::to_string(m.threads) + "\n";
  t += "runs " + std::to_string(m.runs) + "\n";
  t += "median " + num(m.seconds) + "\n";
  t += "min " + num(m.min) + "\n";
  t += "max " + num(m.max) + "\n";
  t += "end\n";
  return t;
}

Status plan_file_parse(const std::string& text, const std::string& machine,
                       const std::string& budget, const std::string& graph, int64_t now,
                       StoredPlan* out, std::string* why) {
  auto corrupt = [&](const std::string& w) {
    *why = w;
    return Status::kCorrupt;
  };
  if (text.size() > kPlanFileMaxBytes) return corrupt("larger than 16 KiB");
  StoredPlan s;
  MeasuredPlan& m = s.plan;
  // Every key must be present exactly once: a file cut short or spliced is corrupt.
  enum Key {
    kMachine,
    kBudget,
    kGraph,
    kCreated,
    kBy,
    kVersion,
    kMetric,
    kPools,
    kIntra,
    kRuns,
    kMedian,
    kMin,
    kMax,
    kKeys
  };
  static const char* const kNames[kKeys] = {"machine", "budget", "graph", "created", "by",
                                            "version", "metric", "pools", "intra",   "runs",
                                            "median",  "min",    "max"};
  bool seen[kKeys] = {};
  std::vector<KeyLine> lines;
  std::string framing;
  if (!key_lines_split(text, kHeader, "parwidth plan file", &lines, &framing))
    return corrupt(framing);
  for (const KeyLine& l : lines) {
    const std::string& key = l.key;
    const std::string& rest = l.rest;
    int k = -1;
    for (int i = 0; i < kKeys; ++i)
      if (key == kNames[i]) k = i;
    if (k < 0) continue;  // a later version may add keys
    if (seen[k]) return corrupt("'" + key + "' twice");
    seen[k] = true;
    int64_t n = 0;
    double v = 0;
    switch (k) {
      case kMachine:
        s.machine = rest;
        break;
      case kBudget:
        s.budget = rest;
        break;
      case kGraph:
        if (rest.empty()) return corrupt("empty 'graph'");
        s.graph = rest;
        break;
      case kCreated:
        if (!int_parse(rest, 0, 1e12, &n)) return corrupt("bad 'created'");
        m.created = n;
        break;
      case kBy:
        if (rest != "tune" && rest != "sweep --save") return corrupt("bad 'by'");
        m.by = rest;
        break;
      case kVersion:
        m.version = rest;
        break;
      case kMetric:
        m.metric = rest;
        break;
      case kPools:
      case kIntra:
        if (!int_parse(rest, 1, 4096, &n)) return corrupt("bad '" + key + "'");
        (k == kPools ? m.pools : m.threads) = static_cast<int>(n);
        break;
      case kRuns:
        if (!int_parse(rest, 1, 1e9, &n)) return corrupt("bad 'runs'");
        m.runs = static_cast<int>(n);
        break;
      default:  // median, min, max
        if (!number_parse(rest, 0, 1e12, &v)) return corrupt("bad '" + key + "'");
        (k == kMedian ? m.seconds : k == kMin ? m.min : m.max) = v;
        break;
    }
  }
  for (int i = 0; i < kKeys; ++i)
    if (!seen[i]) return corrupt(std::string("no '") + kNames[i] + "'");
  if (!(m.min <= m.seconds && m.seconds <= m.max)) return corrupt("median outside [min, max]");
  if (m.created > now + int64_t{24} * 3600) return corrupt("dated in the future");
  if (!machine.empty() && s.machine != machine) {
    *why = "measured on '" + s.machine + "'";
    return Status::kOtherMachine;
  }
  if (!budget.empty() && s.budget != budget) {
    *why = "measured for budget '" + s.budget + "'";
    return Status::kOtherBudget;
  }
  if (!graph.empty() && s.graph != graph) {
    *why = "measured for graph " + s.graph;
    return Status::kOtherGraph;
  }
  m.known = true;
  m.how = measured_describe(m);
  *out = std::move(s);
  return Status::kOk;
}

}  // namespace pw::gov
