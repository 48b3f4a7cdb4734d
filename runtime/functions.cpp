// runtime/functions: TF2 function graphs seen in this process, and the
// per-program memory file.
#include "runtime/functions.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <ctime>
#include <mutex>
#include <new>
#include <vector>

#include "core/cache.h"
#include "core/json.h"
#include "core/report.h"
#include "governor/function_memory.h"

namespace pw::functions {
namespace {

struct Entry {
  std::string how;
  bool readable = true;
  std::string why;  // when not readable
  uint64_t nodes = 0;
  gov::FunctionGraph graph;
};

struct Memory {
  std::string path;       // the file for this program
  bool recalled = false;  // a remembered graph was adopted for this run's plan
  std::string function;   // its name
  int64_t saved = 0;
  std::string written;  // "" | "yes" | the reason it was not
  std::string identity;
};

struct State {
  std::mutex mu;
  std::vector<Entry> seen;
  Memory memory;
};

State& state() {
  static State* s = new State();  // never destroyed: hooks may run during exit
  return *s;
}

constexpr size_t kMaxSeen = 4096;  // entries kept for the report (a long run traces many)
constexpr size_t kMaxArgs = 256;

const char* env(const char* name) {
  return getenv(name);
}

std::string resolved_file(const std::string& p) {
  struct stat st;
  if (p.empty() || p.size() >= PATH_MAX || stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return "";
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// This program's identity hash (governor/function_memory: program_identity).
std::string identity_of_process() {
  std::string text, why;
  if (!cache::file_read_capped("/proc/self/cmdline", 1 << 16, &text, &why) || text.empty())
    return "";
  std::vector<std::string> argv, resolved;
  size_t at = 0;
  while (at < text.size() && argv.size() < kMaxArgs) {
    size_t end = text.find('\0', at);
    if (end == std::string::npos) end = text.size();
    argv.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  char exe[PATH_MAX];
  resolved.push_back(realpath("/proc/self/exe", exe) ? std::string(exe) : std::string());
  for (size_t i = 1; i < argv.size(); ++i) resolved.push_back(resolved_file(argv[i]));
  std::vector<std::string> temps = {"/tmp", "/var/tmp", "/dev/shm"};
  if (const char* t = env("TMPDIR"); t && t[0] == '/') temps.push_back(t);
  return gov::identity_hash(gov::program_identity(argv, resolved, temps));
}

// The memory file of this process (computed once; "" when no cache directory).
std::string memory_path(std::string* identity) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.memory.path.empty()) {
      *identity = s.memory.identity;
      return s.memory.path;
    }
  }
  const std::string dir = cache::cache_dir(env);
  const std::string id = identity_of_process();
  if (dir.empty() || id.empty()) return "";
  std::lock_guard<std::mutex> lock(s.mu);
  s.memory.path = dir + "/tf-functions-" + id + ".txt";
  s.memory.identity = id;
  *identity = id;
  return s.memory.path;
}

std::string when(int64_t t) {
  char b[32];
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", &tm)) return "?";
  return b;
}

}  // namespace

void function_seen(const graph::Graph& g, const graph::Stats& st, const std::string& how) {
  Entry e;
  e.how = how;
  e.nodes = st.nodes;
  gov::FunctionGraph& f = e.graph;
  static_cast<gov::GraphWidth&>(f) = planning::width_of(st);
  f.name = g.name;
  if (st.costs == "flops" && g.nodes.size() <= gov::kFunctionMemoryMaxOps) {
    f.cost_graph = planning::cost_graph_of(g);
  } else if (st.costs == "flops") {
    f.costs = "unit";  // too large to remember operator by operator
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.seen.size() < kMaxSeen) s.seen.push_back(std::move(e));
}

void function_unreadable(const std::string& how, const std::string& why) {
  Entry e;
  e.how = how;
  e.readable = false;
  e.why = why;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.seen.size() < kMaxSeen) s.seen.push_back(std::move(e));
}

bool recall(planning::GraphSummary* out, std::string* warning) {
  std::string identity;
  const std::string path = memory_path(&identity);
  if (path.empty()) return false;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return false;  // nothing remembered: silent
  std::string text, why;
  gov::FunctionMemory m;
  if (!cache::file_read_capped(path, gov::kFunctionMemoryMaxBytes, &text, &why) ||
      !gov::function_memory_parse(text, &m, &why) ||
      (m.program != identity && (why = "written for another program", true))) {
    *warning = "function memory " + path + ": " + why + "; planning without it";
    return false;
  }
  const gov::FunctionGraph& f = m.graph;
  planning::GraphSummary& g = *out;
  g = planning::GraphSummary();
  static_cast<gov::GraphWidth&>(g) = f;  // known: a parsed record is a graph's
  g.source = "tensorflow function graph " + f.name + " (remembered)";
  g.work_over_span = f.span_flops > 0 ? f.work_flops / f.span_flops : 1;
  g.costs_known = f.costs == "flops" && !f.cost_graph.ops.empty();
  g.cost_graph = f.cost_graph;
  g.remembered = "graph: function " + f.name + " remembered from an earlier run of this program (" +
                 path + ", saved " + when(m.saved) + ")";
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.memory.recalled = true;
  s.memory.function = f.name;
  s.memory.saved = m.saved;
  return true;
}

std::string functions_json() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  json::Writer w;
  w.begin_array();
  for (const Entry& e : s.seen) {
    w.begin_object();
    w.key("how").value(e.how);
    if (!e.readable) {
      w.key("readable").value(false).key("why").value(e.why).end_object();
      continue;
    }
    const gov::FunctionGraph& f = e.graph;
    w.key("readable").value(true);
    w.key("name").value(f.name);
    w.key("nodes").value(static_cast<long long>(e.nodes));
    report::width_fields(&w, f);
    w.end_object();
  }
  w.end_array();
  return w.str();
}

std::string memory_json() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  const Memory& m = s.memory;
  if (m.path.empty()) return "null";
  json::Writer w;
  w.begin_object();
  w.key("path").value(m.path);
  w.key("recalled").value(m.recalled);
  w.key("function");
  if (m.recalled)
    w.value(m.function);
  else
    w.null();
  w.key("saved");
  if (m.recalled)
    w.value(when(m.saved));
  else
    w.null();
  w.key("written").value(m.written);
  w.end_object();
  return w.str();
}

void save_at_exit(std::string* warning) {
  State& s = state();
  std::vector<gov::FunctionGraph> graphs;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const Entry& e : s.seen)
      if (e.readable) graphs.push_back(e.graph);
  }
  const int pick = gov::function_pick(graphs);
  if (pick < 0) return;
  std::string identity;
  const std::string path = memory_path(&identity);
  if (path.empty()) return;
  gov::FunctionMemory m;
  m.program = identity;
  m.saved = static_cast<int64_t>(time(nullptr));
  m.graph = std::move(graphs[static_cast<size_t>(pick)]);
  const std::string text = gov::function_memory_format(m);
  std::string why;
  const size_t slash = path.rfind('/');
  bool ok = text.size() <= gov::kFunctionMemoryMaxBytes &&
            cache::file_write_atomic(path.substr(0, slash), path.substr(slash + 1), text, &why);
  if (text.size() > gov::kFunctionMemoryMaxBytes) why = "larger than its cap";
  std::lock_guard<std::mutex> lock(s.mu);
  s.memory.written = ok ? "yes" : why;
  if (!ok) *warning = "function memory " + path + " not written: " + why;
}

void after_fork() {
  State& s = state();
  // The forking thread may have held the lock: start afresh (the old state stays behind).
  new (&s) State();
}

}  // namespace pw::functions
