// governor/function_memory: the program's identity, the graph that stands for
// it, and the memory's text format.
#include "governor/function_memory.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pw::gov {
namespace {

bool under(const std::string& path, const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return false;
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return path.size() > d.size() && path.compare(0, d.size(), d) == 0 && path[d.size()] == '/';
}

bool volatile_arg(const std::string& arg, const std::string& resolved,
                  const std::vector<std::string>& temp_dirs) {
  std::string value = arg;
  if (arg.rfind("--", 0) == 0) {
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) value = arg.substr(eq + 1);
  }
  for (const std::string& d : temp_dirs)
    if (under(value, d) || under(arg, d) || (!resolved.empty() && under(resolved, d))) return true;
  return false;
}

bool name_ok(const std::string& n) {
  if (n.empty() || n.size() > 256) return false;
  for (char c : n) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

// Whitespace-separated words of one line.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool to_long(const std::string& s, long lo, long hi, long* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long x = std::strtol(s.c_str(), &end, 10);
  if (errno || *end || x < lo || x > hi) return false;
  *v = x;
  return true;
}

bool to_double(const std::string& s, double* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (errno || *end || !std::isfinite(x) || x < 0) return false;
  *v = x;
  return true;
}

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

std::string program_identity(const std::vector<std::string>& argv,
                             const std::vector<std::string>& resolved,
                             const std::vector<std::string>& temp_dirs) {
  std::string out;
  bool script = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string r = i < resolved.size() ? resolved[i] : std::string();
    const std::string& shown = r.empty() ? argv[i] : r;
    if (i == 0) {
      out += shown;
      continue;
    }
    if (!r.empty() && !script) {
      script = true;
    } else if (volatile_arg(argv[i], r, temp_dirs)) {
      continue;
    }
    out.push_back('\0');
    out += shown;
  }
  return out;
}

int function_pick(const std::vector<FunctionGraph>& graphs) {
  int best = -1;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const FunctionGraph& g = graphs[i];
    if (g.heavy <= 0) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const FunctionGraph& b = graphs[static_cast<size_t>(best)];
    const bool both_flops = g.costs == "flops" && b.costs == "flops";
    bool better;
    if (both_flops && g.work_flops != b.work_flops)
      better = g.work_flops > b.work_flops;
    else if (g.heavy != b.heavy)
      better = g.heavy > b.heavy;
    else
      better = g.avg_width > b.avg_width;
    if (better) best = static_cast<int>(i);
  }
  return best;
}

std::string identity_hash(const std::string& s) {
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char b[17];
  std::snprintf(b, sizeof b, "%016" PRIx64, h);
  return b;
}

std::string function_memory_format(const FunctionMemory& m) {
  const FunctionGraph& g = m.graph;
  const bool flops = g.costs == "flops" && !g.cost_graph.ops.empty();
  std::string t = "parwidth-tf-functions 1\n";
  t += "program " + m.program + "\n";
  t += "saved " + std::to_string(m.saved) + "\n";
  t += "function " + g.name + " " + std::to_string(g.heavy) + " " + std::to_string(g.layers) + " " +
       std::to_string(g.avg_width) + " " + std::to_string(g.max_level_width) + " " +
       num(g.weighted_parallelism) + " " + (flops ? "flops" : "unit") + " " + num(g.work_flops) +
       " " + num(g.span_flops) + " " + std::to_string(flops ? g.cost_graph.ops.size() : 0) + "\n";
  if (flops)
    for (const OpCost& op : g.cost_graph.ops) {
      t += "op " + num(op.flops) + " " + num(op.bytes);
      for (uint32_t p : op.preds) t += " " + std::to_string(p);
      t += "\n";
    }
  t += "end\n";
  return t;
}

bool function_memory_parse(const std::string& text, FunctionMemory* out, std::string* why) {
  auto bad = [why](const std::string& w) {
    *why = w;
    return false;
  };
  if (text.size() > kFunctionMemoryMaxBytes) return bad("larger than its cap");
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) return bad("truncated (no final newline)");
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  if (lines.size() < 5) return bad("truncated");
  if (lines[0] != "parwidth-tf-functions 1") return bad("not a version-1 function memory");
  FunctionMemory m;
  std::vector<std::string> w = words(lines[1]);
  if (w.size() != 2 || w[0] != "program" || w[1].size() != 16) return bad("bad program line");
  m.program = w[1];
  long saved = 0;
  w = words(lines[2]);
  if (w.size() != 2 || w[0] != "saved" || !to_long(w[1], 0, 1L << 40, &saved))
    return bad("bad saved line");
  m.saved = saved;
  w = words(lines[3]);
  FunctionGraph& g = m.graph;
  long ops = 0;
  if (w.size() != 11 || w[0] != "function" || !name_ok(w[1]) ||
      !to_long(w[2], 0, 1L << 40, &g.heavy) || !to_long(w[3], 0, 1L << 40, &g.layers) ||
      !to_long(w[4], 1, 1L << 40, &g.avg_width) ||
      !to_long(w[5], 0, 1L << 40, &g.max_level_width) ||
      !to_double(w[6], &g.weighted_parallelism) || (w[7] != "flops" && w[7] != "unit") ||
      !to_double(w[8], &g.work_flops) || !to_double(w[9], &g.span_flops) ||
      !to_long(w[10], 0, static_cast<long>(kFunctionMemoryMaxOps), &ops))
    return bad("bad function line");
  g.known = true;
  g.name = w[1];
  g.costs = w[7];
  if ((g.costs == "flops") != (ops > 0)) return bad("costs and operator count disagree");
  if (lines.size() != static_cast<size_t>(ops) + 5) return bad("operator count does not match");
  g.cost_graph.ops.reserve(static_cast<size_t>(ops));
  for (long i = 0; i < ops; ++i) {
    w = words(lines[static_cast<size_t>(4 + i)]);
    OpCost c;
    if (w.size() < 3 || w[0] != "op" || !to_double(w[1], &c.flops) || !to_double(w[2], &c.bytes))
      return bad("bad op line " + std::to_string(i));
    for (size_t k = 3; k < w.size(); ++k) {
      long p = 0;
      if (!to_long(w[k], 0, ops - 1, &p) || p == i)
        return bad("bad pred on op " + std::to_string(i));
      c.preds.push_back(static_cast<uint32_t>(p));
    }
    g.cost_graph.ops.push_back(std::move(c));
  }
  if (lines.back() != "end") return bad("no end line");
  *out = std::move(m);
  return true;
}

}  // namespace pw::gov
