// cli/measure: one timed run of a command under given thread settings, and the
// time metric (`parwidth sweep`, `parwidth tune`).
#pragma once

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.h"

namespace pw::cli {

struct RunSpec {
  bool preload = true;         // false: ungoverned, the program's own defaults
  int pools = 0, threads = 0;  // PARWIDTH_POOLS / PARWIDTH_INTRA; 0 = the plan's
  std::string report;          // PARWIDTH_REPORT, "" = none
  std::vector<std::pair<std::string, std::string>> env;  // more variables for the child
};

// Runs cmd (its stdout collected in *out, its stderr to log_fd when >= 0) and
// times it. Governed runs get PARWIDTH_NODE=off unless it is set: a
// configuration is measured as given, not shared with other governed
// processes. False with *why when it cannot run or exits non-zero.
bool run_once(char** cmd, const RunSpec& spec, const std::string& lib, int log_fd, std::string* out,
              double* seconds, std::string* why);

// The time metric: wall seconds, or the number --metric's first group captures.
class Metric {
 public:
  // False with *err for a bad pattern or one without a capture group.
  bool parse(const std::string& pattern, std::string* err);
  bool wall() const { return pattern_.empty(); }
  const std::string& pattern() const { return pattern_; }
  std::string describe() const { return wall() ? "wall seconds" : pattern_; }
  // The value of one run; false when the pattern finds nothing in out.
  bool value(const std::string& out, double seconds, double* v) const;

 private:
  std::string pattern_;
  std::regex re_;
};

// `parwidth sweep` and `parwidth tune` both time a command: their options, plus --json,
// --metric and --lib, then "--" and the command.
struct Command {
  bool json = false;
  char** cmd = nullptr;  // argv from the command on (null-terminated, as argv is)
  Metric metric;         // how a run is timed (--metric; default wall seconds)
  std::string so;        // the preload library (--lib, else PARWIDTH_LIB, else the layout's)
};

// Scans `own` and the shared options, then checks a command follows, --metric compiles
// and the library is readable. -1 to go on, else the exit code (0 after --help; 2 after
// one line "parwidth VERB: error: ...").
int command_scan(const char* verb, int argc, char** argv, std::vector<Option> own,
                 void (*usage)(FILE*), Command* out);

struct Summary {
  double min = 0, median = 0, max = 0;
};
Summary summarize(std::vector<double> v);

}  // namespace pw::cli
