// core/options: every PARWIDTH_<NAME> option, parsed from one table.
//
// A bad value gets one warning naming the option and keeps the default;
// nothing here aborts, throws or prints (warnings are returned).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "governor/pin.h"
#include "governor/plan_source.h"

namespace pw::opt {

enum class Mode { kOff, kObserve, kGovern };
enum class PapiMode { kOff, kAuto, kOn };

struct Options {
  Mode mode = Mode::kGovern;
  int pools = 0;    // 0 = plan from the graph
  int threads = 0;  // PARWIDTH_INTRA; 0 = plan from the budget
  std::string model;
  std::string input_shapes;  // "name=1x3x224x224,name2=8x16": graph input shapes for costs
  std::string cpus;
  bool smt = false;
  gov::PinMode pin = gov::PinMode::kCore;
  bool monitor = true;
  int monitor_ms = 100;
  std::string report;
  int verbose = 0;
  std::string include;
  std::string exclude;
  std::string topology;
  bool override_user = false;
  int local_rank = -1;  // -1 = from the launcher
  int local_size = -1;
  std::string cgroup;  // the cgroup directory to read instead of this process's
  PapiMode papi =
      PapiMode::kAuto;   // PAPI counters for the monitor (off: /proc only; see options.cpp)
  bool node = true;      // join the node registry when no launcher describes the process
  std::string node_dir;  // the registry directory; "" = /dev/shm/parwidth-<uid> (or /tmp)
  gov::PlanMode plan = gov::PlanMode::kAuto;  // which plan sources to try
  int node_idle_ms = 3000;                    // a member idle this long leaves the registry
  // Governed processes the node is expected to hold (0: none stated): pools a
  // framework cannot resize are made for the share among that many.
  int node_expect = 0;
};

// One row of the table, for --help, the README and verbose output.
struct OptionInfo {
  std::string name;  // without the PARWIDTH_ prefix
  std::string type;  // "off|observe|govern", "int 1..4096", "bool", "path", ...
  std::string def;   // the default, as text (the Options struct's default, shown)
  std::string help;
};
const std::vector<OptionInfo>& options_table();

// getenv-like lookup; returns nullptr when unset. Tests pass a map.
using EnvLookup = std::function<const char*(const char* name)>;

// Parses every option; each bad value adds one warning and keeps the default.
Options options_parse(const EnvLookup& env, std::vector<std::string>* warnings);

// "name=value" for every option, for verbose mode.
std::vector<std::string> options_describe(const Options& o);

const char* mode_name(Mode m);

// Program-name patterns: ':' or ',' separated shell globs, matched against
// each of the names given (the executable's and argv[0]'s base names).
bool patterns_match(const std::string& patterns, const std::vector<std::string>& names);

// Should this process be governed at all (mode, include/exclude)?
bool process_selected(const Options& o, const std::vector<std::string>& names);

}  // namespace pw::opt
