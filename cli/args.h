// cli/args: the subcommands' options, declared as a table and scanned in one place, so
// that every subcommand takes "--name VALUE" and "--name=VALUE", answers -h/--help, and
// words its errors the same way (one line: "<who>: error: ...").
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace pw::cli {

struct Option {
  std::string name;   // "--repeat"
  std::string wants;  // "" for a flag; else what the value must be ("an integer 1..100")
  // Takes the value ("" for a flag). False when it is not what `wants` says; *why, when
  // set, replaces the "wants ..." wording of the error.
  std::function<bool(const std::string& value, std::string* why)> take;
};

Option flag(const char* name, bool* out);
Option text(const char* name, std::string* out);
// An integer lo..hi.
Option count(const char* name, int lo, int hi, int* out);
// Seconds > 0 and at most max_s.
Option seconds(const char* name, double max_s, double* out);
// Counts 1..4096 as "1,2,4" or "1-4" (mixed, repeatable within the list): sorted, unique.
Option count_list(const char* name, std::vector<int>* out);

// A graph input's shape, "NAME=1x3x224x224" (or several, comma-separated; repeatable):
// each is checked, then appended to *joined, comma-separated as PARWIDTH_INPUT_SHAPES.
Option input_shapes(const char* name, std::string* joined);

// Where the options end.
enum class Ends {
  kNoRest,     // every argument is an option (or a positional, when positionals is given)
  kAtDashes,   // "--" ends them; what follows is a command
  kAtCommand,  // "--", or the first argument that is not an option, begins a command
};

// Scans argv[1..] against opts. -h/--help prints usage to stdout. Returns -1 to go on,
// else the exit code: 0 after the help, 2 after one error line on stderr (an unknown
// option, a missing or bad value, a positional where none is taken). *rest, when given,
// is the index of the first argument after the options (argc when there is none).
// positionals, when given, collects the arguments that are not options (kNoRest only).
int options_scan(const char* who, int argc, char** argv, const std::vector<Option>& opts, Ends ends,
                 void (*usage)(FILE*), int* rest = nullptr,
                 std::vector<std::string>* positionals = nullptr);

// The process's environment, as the options' lookup (opt::EnvLookup) takes it.
inline const char* env_get(const char* name) {
  return std::getenv(name);
}

inline bool count_parse(const std::string& s, int lo, int hi, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace pw::cli
