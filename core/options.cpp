// core/options: the option table and its parser.
#include "core/options.h"

#include <fnmatch.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "graph/graph.h"

namespace pw::opt {
namespace {

// One row of the table: its text (name, kind, default, help) and what reads and shows the
// value. The builders below write each option's range and words once: the kind's text,
// the parser's checks and the warning come from the same numbers and names, and the
// default shown is the Options struct's own default, shown by the same function.
//
// Built at every governed process's start (options_parse), so a row holds literals
// by pointer and small captures; the texts --help shows are made on demand.
struct Row {
  const char* name;  // without the PARWIDTH_ prefix
  std::string kind;  // "off|observe|govern", "int 1..4096", "bool", "path", ...
  const char* help;
  // Applies `text` to `o`; returns false (with *why) when the value is bad.
  std::function<bool(const char* text, Options* o, std::string* why)> apply;
  // The value in `o`, as text ("name=value" in the report, the default in --help).
  std::function<std::string(const Options& o)> show;
};

bool int_parse(const char* s, long lo, long hi, int* out, std::string* why) {
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

bool bool_parse(const char* s, bool* out, std::string* why) {
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

template <typename E>
struct Word {
  const char* word;
  E value;
  bool listed;  // shown in the kind's text (false: a synonym)
};

constexpr Word<Mode> kModeWords[] = {
    {"off", Mode::kOff, true}, {"observe", Mode::kObserve, true}, {"govern", Mode::kGovern, true}};
constexpr Word<gov::PinMode> kPinWords[] = {{"none", gov::PinMode::kNone, true},
                                            {"pool", gov::PinMode::kPool, true},
                                            {"core", gov::PinMode::kCore, true}};
constexpr Word<PapiMode> kPapiWords[] = {
    {"auto", PapiMode::kAuto, true}, {"on", PapiMode::kOn, true},
    {"off", PapiMode::kOff, true},   {"1", PapiMode::kOn, false},
    {"yes", PapiMode::kOn, false},   {"true", PapiMode::kOn, false},
    {"0", PapiMode::kOff, false},    {"no", PapiMode::kOff, false},
    {"false", PapiMode::kOff, false}};
constexpr Word<gov::PlanMode> kPlanWords[] = {{"auto", gov::PlanMode::kAuto, true},
                                              {"measured", gov::PlanMode::kMeasured, true},
                                              {"model", gov::PlanMode::kModel, true},
                                              {"width", gov::PlanMode::kWidth, true}};

template <typename E, size_t N>
const char* word_of(const Word<E> (&words)[N], E v) {
  for (const Word<E>& w : words)
    if (w.value == v) return w.word;
  return "?";
}

// The field (and an int's range) are template arguments, so that the functions' captures
// stay within std::function's own storage: no allocation per row.
// The listed words, joined by `sep` ("off|observe|govern", "off, observe, govern").
template <typename E, size_t N>
std::string words_joined(const Word<E> (&words)[N], const char* sep) {
  std::string out;
  for (const Word<E>& w : words)
    if (w.listed) out += (out.empty() ? "" : sep) + std::string(w.word);
  return out;
}

template <auto Field, typename E, size_t N>
Row choice_row(const char* name, const Word<E> (&words)[N], const char* help) {
  constexpr E Options::*field = Field;
  return {name, words_joined(words, "|"), help,
          [&words](const char* s, Options* o, std::string* why) {
            for (const Word<E>& w : words)
              if (strcasecmp(s, w.word) == 0) return o->*field = w.value, true;
            *why = "not one of " + words_joined(words, ", ");
            return false;
          },
          [&words](const Options& o) { return std::string(word_of(words, o.*field)); }};
}

// An integer lo..hi; a value below lo (the struct's "not set") shows as `unset`.
template <int Options::*field, long lo, long hi>
Row int_row(const char* name, const char* unset, const char* help) {
  return {name, "int " + std::to_string(lo) + ".." + std::to_string(hi), help,
          [](const char* s, Options* o, std::string* why) {
            return int_parse(s, lo, hi, &(o->*field), why);
          },
          [unset](const Options& o) {
            return o.*field < lo && unset ? std::string(unset) : std::to_string(o.*field);
          }};
}

// A boolean, shown as words[0] / words[1] ("0"/"1" or "off"/"on"); any boolean word reads.
template <bool Options::*field>
Row bool_row(const char* name, const char* off, const char* on, const char* help) {
  const std::string kind = std::string(off) == "0" ? "bool" : std::string(on) + "|" + off;
  return {
      name, kind, help,
      [](const char* s, Options* o, std::string* why) { return bool_parse(s, &(o->*field), why); },
      [off, on](const Options& o) { return std::string(o.*field ? on : off); }};
}

// Text; empty (the struct's default) shows as `unset`. `check`, when given, vets it.
template <std::string Options::*field>
Row text_row(const char* name, const char* kind, const char* unset, const char* help,
             bool (*check)(const char* s, std::string* why) = nullptr) {
  return {name, kind, help,
          [check](const char* s, Options* o, std::string* why) {
            if (!nonempty(s, &(o->*field), why)) return false;
            if (check && !check(s, why)) {
              (o->*field).clear();
              return false;
            }
            return true;
          },
          [unset](const Options& o) { return (o.*field).empty() ? std::string(unset) : o.*field; }};
}

bool input_shapes_check(const char* s, std::string* why) {
  graph::InputShapes parsed;
  return graph::input_shapes_parse(s, &parsed, why) == graph::Status::kOk;
}

bool cpulist_check(const char* s, std::string* why) {
  for (const char* p = s; *p; ++p) {
    if (!strchr("0123456789-, \n", *p)) {
      *why = "not a cpu list (e.g. 0-3,8)";
      return false;
    }
  }
  return true;
}

std::vector<Row> rows_make() {
  std::vector<Row> r = {
      choice_row<&Options::mode>(
          "MODE", kModeWords,
          "off: do nothing; observe: change nothing, report the plan; govern: apply it"),
      int_row<&Options::pools, 1, 4096>("POOLS", "from the graph",
                                        "number of inter-op pools (overrides the plan)"),
      int_row<&Options::threads, 1, 4096>(
          "INTRA", "cores / pools", "intra-op (OpenMP) threads per pool (overrides the plan)"),
      text_row<&Options::model>("MODEL", "path", "none",
                                "model graph: .onnx, .pb GraphDef or SavedModel dir, .json"),
      text_row<&Options::input_shapes>(
          "INPUT_SHAPES", "name=DxD..,..", "the model's",
          "shapes of the model's graph inputs for its operator costs, e.g. "
          "input=1x3x224x224,ids=8x16 (symbolic dims otherwise count as 1)",
          input_shapes_check),
      text_row<&Options::cpus>("CPUS", "cpu list", "all allowed",
                               "restrict the budget to these CPUs, e.g. 0-3,8", cpulist_check),
      bool_row<&Options::smt>("SMT", "0", "1", "use SMT siblings as separate slots"),
      choice_row<&Options::pin>(
          "PIN", kPinWords,
          "pin each new thread to one core of its pool, to its pool's cores, or not at all"),
      bool_row<&Options::monitor>("MONITOR", "off", "on", "watch for oversubscription at run time"),
      int_row<&Options::monitor_ms, 10, 60000>("MONITOR_MS", nullptr,
                                               "monitor sampling period in milliseconds"),
      text_row<&Options::report>("REPORT", "path", "none",
                                 "write the JSON report here at exit (%p = pid)"),
      int_row<&Options::verbose, 0, 3>(
          "VERBOSE", nullptr, "1: summary on stderr at exit; 2: options and plan; 3: threads"),
      text_row<&Options::include>("INCLUDE", "patterns", "all",
                                  "govern only programs whose name matches (globs, ':'-separated)"),
      text_row<&Options::exclude>("EXCLUDE", "patterns", "none",
                                  "never govern programs whose name matches"),
      text_row<&Options::topology>(
          "TOPOLOGY", "path|synthetic:<desc>", "this machine",
          "plan for an hwloc XML file or synthetic topology instead of this machine"),
      bool_row<&Options::override_user>("OVERRIDE", "0", "1",
                                        "replace thread settings the user made explicitly"),
      int_row<&Options::local_rank, 0, 65535>("LOCAL_RANK", "from the launcher",
                                              "this process's rank on the node"),
      int_row<&Options::local_size, 1, 65536>("LOCAL_SIZE", "from the launcher",
                                              "governed processes on the node"),
      text_row<&Options::cgroup>(
          "CGROUP", "path", "this process's cgroup",
          "read cgroup limits from this directory (tests, containers with odd mounts)"),
      // auto by default: the counters are opened at activation, on the activating thread, and
      // only while it is the process's only thread (libpapi's and libpfm's initialisation call
      // strtok, getenv and putenv, process-wide libc state; initialised on the monitor thread
      // beside the host's threads it corrupted Open MPI processes' heaps in about 2% of runs).
      // Where PAPI's perf_event component is disabled, libpapi is absent, or threads already
      // run, the monitor uses /proc alone and the report says why. on: the same, plus a
      // warning when it cannot.
      choice_row<&Options::papi>(
          "PAPI", kPapiWords,
          "PAPI perf_event counters for the monitor where the component is active (off: "
          "/proc only)"),
      bool_row<&Options::node>(
          "NODE", "off", "on",
          "divide the node's cores with other governed processes that no launcher "
          "describes"),
      text_row<&Options::node_dir>(
          "NODE_DIR", "path", "/dev/shm/parwidth-<uid>",
          "the node registry's directory (created 0700; /tmp/parwidth-<uid> without "
          "/dev/shm)"),
      choice_row<&Options::plan>(
          "PLAN", kPlanWords,
          "plan source: a measured plan stored for the graph, the model's predicted "
          "fastest, the width rule (auto: in that order)"),
      int_row<&Options::node_idle_ms, 100, 3600000>(
          "NODE_IDLE_MS", nullptr,
          "a node registry member idle this long gives its share back (re-joins when busy)"),
      int_row<&Options::node_expect, 1, 4096>(
          "NODE_EXPECT", "none",
          "governed processes this node is expected to hold: pools a framework cannot resize "
          "(ONNX Runtime and TensorFlow sessions) are made for the share among that many, "
          "even before the others arrive"),
  };
  return r;
}

const std::vector<Row>& rows() {
  static const std::vector<Row>* r = new std::vector<Row>(rows_make());
  return *r;
}

}  // namespace

const std::vector<OptionInfo>& options_table() {
  static const std::vector<OptionInfo>* table = [] {
    auto* t = new std::vector<OptionInfo>();
    const Options defaults;
    for (const Row& r : rows()) t->push_back({r.name, r.kind, r.show(defaults), r.help});
    return t;
  }();
  return *table;
}

Options options_parse(const EnvLookup& env, std::vector<std::string>* warnings) {
  Options o;
  for (const Row& r : rows()) {
    const std::string var = std::string("PARWIDTH_") + r.name;
    const char* value = env(var.c_str());
    // Empty means unset (`PARWIDTH_REPORT= cmd` is how a shell clears one).
    if (value == nullptr || *value == '\0') continue;
    Options trial = o;
    std::string why;
    if (r.apply(value, &trial, &why)) {
      o = trial;
    } else if (warnings) {
      warnings->push_back(var + "=\"" + value + "\" ignored: " + why + "; using the default (" +
                          r.show(Options{}) + ")");
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
  return word_of(kModeWords, m);
}

std::vector<std::string> options_describe(const Options& o) {
  std::vector<std::string> out;
  for (const Row& r : rows()) out.push_back(r.name + ("=" + r.show(o)));
  return out;
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
