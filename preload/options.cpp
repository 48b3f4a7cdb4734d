// preload/options: the option table and its parser.
#include "preload/options.h"

#include <fnmatch.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "graph/graph.h"

namespace pw::opt {
namespace {

struct Row {
  OptionInfo info;
  // Applies `text` to `o`; returns false (with *why) when the value is bad.
  bool (*apply)(const char* text, Options* o, std::string* why);
};

bool parse_int(const char* s, long lo, long hi, int* out, std::string* why) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!end || end == s) {
    *why = "not an integer";
    return false;
  }
  while (*end == ' ') ++end;
  if (*end != '\0' || errno == ERANGE) {
    *why = "not an integer";
    return false;
  }
  if (v < lo || v > hi) {
    *why = "out of range " + std::to_string(lo) + ".." + std::to_string(hi);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool parse_bool(const char* s, bool* out, std::string* why) {
  static const char* const yes[] = {"1", "on", "yes", "true"};
  static const char* const no[] = {"0", "off", "no", "false"};
  for (const char* w : yes)
    if (strcasecmp(s, w) == 0) return *out = true, true;
  for (const char* w : no)
    if (strcasecmp(s, w) == 0) return *out = false, true;
  *why = "not a boolean (1/0, on/off, yes/no, true/false)";
  return false;
}

bool nonempty(const char* s, std::string* out, std::string* why) {
  if (*s == '\0') {
    *why = "empty";
    return false;
  }
  *out = s;
  return true;
}

const Row kRows[] = {
    {{"MODE", "off|observe|govern", "govern",
      "off: do nothing; observe: change nothing, report the plan; govern: apply it"},
     [](const char* s, Options* o, std::string* why) {
       if (!strcasecmp(s, "off")) return o->mode = Mode::kOff, true;
       if (!strcasecmp(s, "observe")) return o->mode = Mode::kObserve, true;
       if (!strcasecmp(s, "govern")) return o->mode = Mode::kGovern, true;
       *why = "not one of off, observe, govern";
       return false;
     }},
    {{"POOLS", "int 1..4096", "from the graph", "number of inter-op pools (overrides the plan)"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 1, 4096, &o->pools, why);
     }},
    {{"INTRA", "int 1..4096", "cores / pools",
      "intra-op (OpenMP) threads per pool (overrides the plan)"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 1, 4096, &o->intra, why);
     }},
    {{"MODEL", "path", "none", "model graph: .onnx, .pb GraphDef or SavedModel dir, .json"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->model, why); }},
    {{"INPUT_SHAPES", "name=DxD..,..", "the model's",
      "shapes of the model's graph inputs for its operator costs, e.g. "
      "input=1x3x224x224,ids=8x16 (symbolic dims otherwise count as 1)"},
     [](const char* s, Options* o, std::string* why) {
       graph::InputShapes parsed;
       if (graph::input_shapes_parse(s, &parsed, why) != graph::Status::kOk) return false;
       o->input_shapes = s;
       return true;
     }},
    {{"CPUS", "cpu list", "all allowed", "restrict the budget to these CPUs, e.g. 0-3,8"},
     [](const char* s, Options* o, std::string* why) {
       if (!nonempty(s, &o->cpus, why)) return false;
       for (const char* p = s; *p; ++p) {
         if (!strchr("0123456789-, \n", *p)) {
           *why = "not a cpu list (e.g. 0-3,8)";
           o->cpus.clear();
           return false;
         }
       }
       return true;
     }},
    {{"SMT", "bool", "0", "use SMT siblings as separate slots"},
     [](const char* s, Options* o, std::string* why) { return parse_bool(s, &o->smt, why); }},
    {{"PIN", "none|pool|core", "core",
      "pin each new thread to one core of its pool, to its pool's cores, or not at all"},
     [](const char* s, Options* o, std::string* why) {
       if (!strcasecmp(s, "none")) return o->pin = Pin::kNone, true;
       if (!strcasecmp(s, "pool")) return o->pin = Pin::kPool, true;
       if (!strcasecmp(s, "core")) return o->pin = Pin::kCore, true;
       *why = "not one of none, pool, core";
       return false;
     }},
    {{"MONITOR", "on|off", "on", "watch for oversubscription at run time"},
     [](const char* s, Options* o, std::string* why) { return parse_bool(s, &o->monitor, why); }},
    {{"MONITOR_MS", "int 10..60000", "100", "monitor sampling period in milliseconds"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 10, 60000, &o->monitor_ms, why);
     }},
    {{"REPORT", "path", "none", "write the JSON report here at exit (%p = pid)"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->report, why); }},
    {{"VERBOSE", "int 0..3", "0", "1: summary on stderr at exit; 2: options and plan; 3: threads"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 0, 3, &o->verbose, why);
     }},
    {{"INCLUDE", "patterns", "all",
      "govern only programs whose name matches (globs, ':'-separated)"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->include, why); }},
    {{"EXCLUDE", "patterns", "none", "never govern programs whose name matches"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->exclude, why); }},
    {{"TOPOLOGY", "path|synthetic:<desc>", "this machine",
      "plan for an hwloc XML file or synthetic topology instead of this machine"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->topology, why); }},
    {{"OVERRIDE", "bool", "0", "replace thread settings the user made explicitly"},
     [](const char* s, Options* o, std::string* why) {
       return parse_bool(s, &o->override_user, why);
     }},
    {{"LOCAL_RANK", "int 0..65535", "from the launcher", "this process's rank on the node"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 0, 65535, &o->local_rank, why);
     }},
    {{"LOCAL_SIZE", "int 1..65536", "from the launcher", "governed processes on the node"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 1, 65536, &o->local_size, why);
     }},
    {{"CGROUP", "path", "this process's cgroup",
      "read cgroup limits from this directory (tests, containers with odd mounts)"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->cgroup, why); }},
    // auto by default: the counters are opened at activation, on the activating thread, and only
    // while it is the process's only thread (libpapi's and libpfm's initialisation call strtok,
    // getenv and putenv, process-wide libc state; initialised on the monitor thread beside the
    // host's threads it corrupted Open MPI processes' heaps in about 2% of runs). Where PAPI's
    // perf_event component is disabled, libpapi is absent, or threads already run, the monitor
    // uses /proc alone and the report says why. on: the same, plus a warning when it cannot.
    {{"PAPI", "auto|on|off", "auto",
      "PAPI perf_event counters for the monitor where the component is active (off: /proc only)"},
     [](const char* s, Options* o, std::string* why) {
       if (!strcasecmp(s, "auto")) return o->papi = Papi::kAuto, true;
       bool b = false;
       if (!parse_bool(s, &b, why)) {
         *why = "not one of auto, on, off (or another boolean word)";
         return false;
       }
       o->papi = b ? Papi::kOn : Papi::kOff;
       return true;
     }},
    {{"NODE", "on|off", "on",
      "divide the node's cores with other governed processes that no launcher describes"},
     [](const char* s, Options* o, std::string* why) { return parse_bool(s, &o->node, why); }},
    {{"NODE_DIR", "path", "/dev/shm/parwidth-<uid>",
      "the node registry's directory (created 0700; /tmp/parwidth-<uid> without /dev/shm)"},
     [](const char* s, Options* o, std::string* why) { return nonempty(s, &o->node_dir, why); }},
    {{"PLAN", "auto|measured|model|width", "auto",
      "plan source: a measured plan stored for the graph, the model's predicted fastest, the "
      "width rule (auto: in that order)"},
     [](const char* s, Options* o, std::string* why) {
       static const gov::PlanMode kModes[] = {gov::PlanMode::kAuto, gov::PlanMode::kMeasured,
                                              gov::PlanMode::kModel, gov::PlanMode::kWidth};
       for (gov::PlanMode m : kModes)
         if (!strcasecmp(s, gov::plan_mode_name(m))) return o->plan = m, true;
       *why = "not one of auto, measured, model, width";
       return false;
     }},
    {{"NODE_IDLE_MS", "int 100..3600000", "3000",
      "a node registry member idle this long gives its share back (re-joins when busy)"},
     [](const char* s, Options* o, std::string* why) {
       return parse_int(s, 100, 3600000, &o->node_idle_ms, why);
     }},
};

}  // namespace

const std::vector<OptionInfo>& options_table() {
  static const std::vector<OptionInfo>* table = [] {
    auto* t = new std::vector<OptionInfo>();
    for (const Row& r : kRows) t->push_back(r.info);
    return t;
  }();
  return *table;
}

Options options_parse(const EnvLookup& env, std::vector<std::string>* warnings) {
  Options o;
  for (const Row& r : kRows) {
    const std::string var = std::string("PARWIDTH_") + r.info.name;
    const char* value = env(var.c_str());
    // Empty means unset (`PARWIDTH_REPORT= cmd` is how a shell clears one).
    if (value == nullptr || *value == '\0') continue;
    Options trial = o;
    std::string why;
    if (r.apply(value, &trial, &why)) {
      o = trial;
    } else if (warnings) {
      warnings->push_back(var + "=\"" + value + "\" ignored: " + why + "; using the default (" +
                          r.info.def + ")");
    }
  }
  if (o.local_rank >= 0 && o.local_size > 0 && o.local_rank >= o.local_size) {
    if (warnings)
      warnings->push_back("PARWIDTH_LOCAL_RANK=" + std::to_string(o.local_rank) +
                          " is not below PARWIDTH_LOCAL_SIZE=" + std::to_string(o.local_size) +
                          "; both ignored");
    o.local_rank = o.local_size = -1;
  }
  return o;
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kOff:
      return "off";
    case Mode::kObserve:
      return "observe";
    case Mode::kGovern:
      return "govern";
  }
  return "?";
}

const char* papi_name(Papi p) {
  switch (p) {
    case Papi::kOff:
      return "off";
    case Papi::kAuto:
      return "auto";
    case Papi::kOn:
      return "on";
  }
  return "?";
}

const char* pin_name(Pin p) {
  switch (p) {
    case Pin::kNone:
      return "none";
    case Pin::kPool:
      return "pool";
    case Pin::kCore:
      return "core";
  }
  return "?";
}

std::vector<std::string> options_describe(const Options& o) {
  auto num = [](int v) { return v > 0 ? std::to_string(v) : std::string("auto"); };
  auto str = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  return {
      std::string("MODE=") + mode_name(o.mode),
      "POOLS=" + num(o.pools),
      "INTRA=" + num(o.intra),
      "MODEL=" + str(o.model),
      "INPUT_SHAPES=" + str(o.input_shapes),
      "CPUS=" + str(o.cpus),
      std::string("SMT=") + (o.smt ? "1" : "0"),
      std::string("PIN=") + pin_name(o.pin),
      std::string("MONITOR=") + (o.monitor ? "on" : "off"),
      "MONITOR_MS=" + std::to_string(o.monitor_ms),
      "REPORT=" + str(o.report),
      "VERBOSE=" + std::to_string(o.verbose),
      "INCLUDE=" + str(o.include),
      "EXCLUDE=" + str(o.exclude),
      "TOPOLOGY=" + str(o.topology),
      std::string("OVERRIDE=") + (o.override_user ? "1" : "0"),
      "LOCAL_RANK=" + (o.local_rank >= 0 ? std::to_string(o.local_rank) : std::string("auto")),
      "LOCAL_SIZE=" + (o.local_size > 0 ? std::to_string(o.local_size) : std::string("auto")),
      "CGROUP=" + str(o.cgroup),
      std::string("PAPI=") + papi_name(o.papi),
      std::string("NODE=") + (o.node ? "on" : "off"),
      "NODE_DIR=" + str(o.node_dir),
      std::string("PLAN=") + gov::plan_mode_name(o.plan),
      "NODE_IDLE_MS=" + std::to_string(o.node_idle_ms),
  };
}

bool patterns_match(const std::string& patterns, const std::vector<std::string>& names) {
  size_t start = 0;
  while (start <= patterns.size()) {
    size_t end = patterns.find_first_of(":,", start);
    if (end == std::string::npos) end = patterns.size();
    const std::string pat = patterns.substr(start, end - start);
    if (!pat.empty()) {
      for (const std::string& n : names)
        if (!n.empty() && fnmatch(pat.c_str(), n.c_str(), 0) == 0) return true;
    }
    start = end + 1;
  }
  return false;
}

bool process_selected(const Options& o, const std::vector<std::string>& names) {
  if (o.mode == Mode::kOff) return false;
  if (!o.include.empty() && !patterns_match(o.include, names)) return false;
  if (!o.exclude.empty() && patterns_match(o.exclude, names)) return false;
  return true;
}

}  // namespace pw::opt
