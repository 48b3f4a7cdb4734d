// cli/cmd_run: `parwidth run -- cmd`: set up the preload and options, then exec.
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/calibrate.h"
#include "cli/commands.h"
#include "cli/locate.h"
#include "preload/cache.h"
#include "preload/options.h"
#include "preload/planning.h"

namespace {

void usage(FILE* f) {
  fputs(
      "usage: parwidth run [options] -- CMD [ARGS...]\n"
      "\n"
      "Runs CMD with libparwidth.so preloaded. Options set the PARWIDTH_* variable\n"
      "of the same name for CMD and its children; variables already set are kept\n"
      "unless an option names them.\n"
      "\n"
      "  --pools N        inter-op pools (PARWIDTH_POOLS)\n"
      "  --intra N        threads per pool (PARWIDTH_INTRA)\n"
      "  --model FILE     model graph (PARWIDTH_MODEL)\n"
      "  --report FILE    JSON report at exit, %p = pid (PARWIDTH_REPORT)\n"
      "  --mode MODE      off | observe | govern (PARWIDTH_MODE)\n"
      "  --cpus LIST      restrict the budget (PARWIDTH_CPUS)\n"
      "  --pin MODE       none | pool | core (PARWIDTH_PIN)\n"
      "  --verbose N      0..3 (PARWIDTH_VERBOSE)\n"
      "  --no-calibrate   do not calibrate this machine and budget first (see below)\n"
      "  --lib PATH       the preload library (default: $PARWIDTH_LIB, else\n"
      "                   ../lib/libparwidth.so next to this program; see\n"
      "                   `parwidth --print-lib`)\n"
      "  -h, --help       this help\n"
      "\n"
      "Before CMD starts, a machine and budget without a stored calibration is\n"
      "calibrated once (`parwidth calibrate`: a few seconds, a progress line on\n"
      "stderr), so that the plan's model uses this machine's measured OpenMP scaling;\n"
      "never inside CMD's process. Skipped with --no-calibrate, PARWIDTH_MODE=off,\n"
      "PARWIDTH_POOLS/INTRA, PARWIDTH_PLAN=width or measured, or a described\n"
      "PARWIDTH_TOPOLOGY.\n"
      "\n"
      "Environment options:\n",
      f);
  for (const pw::opt::OptionInfo& o : pw::opt::options_table())
    fprintf(f, "  PARWIDTH_%-12s %-22s default %s\n      %s\n", o.name, o.type, o.def, o.help);
  fputs("\nExit status: CMD's own; 2 for a usage error; 126/127 if CMD cannot be run.\n", f);
}

// Calibrates this machine and budget once, before CMD, when the model may plan
// there and no calibration is stored. Problems are warnings: CMD runs anyway.
void calibrate_first() {
  const pw::opt::EnvLookup env = [](const char* n) { return static_cast<const char*>(getenv(n)); };
  std::vector<std::string> warns;
  pw::opt::Options o = pw::opt::options_parse(env, &warns);
  o.model.clear();  // the budget is all that is needed: no graph read here
  if (o.mode == pw::opt::Mode::kOff || o.pools > 0 || o.intra > 0 || !o.topology.empty() ||
      o.plan == pw::gov::PlanMode::kWidth || o.plan == pw::gov::PlanMode::kMeasured)
    return;
  pw::planning::Planned p;
  std::string err;
  // Without a budget the preload runs ungoverned and says why; nothing to calibrate.
  if (!pw::planning::plan_process(o, env, nullptr, &p, &err)) return;
  if (!pw::cli::calibrate_if_missing(p, pw::cache::cache_dir(env), &err) && !err.empty())
    fprintf(stderr, "parwidth run: warning: calibration failed (%s); the built-in model plans\n",
            err.c_str());
}

}  // namespace

int pw_cmd_run(int argc, char** argv) {
  pw::cli::Args a(argc, argv);
  std::vector<std::pair<std::string, std::string>> sets;
  std::string lib, v;
  bool missing = false, no_calibrate = false;
  struct Map {
    const char* flag;
    const char* var;
  };
  static const Map kMap[] = {{"--pools", "PARWIDTH_POOLS"}, {"--intra", "PARWIDTH_INTRA"},
                             {"--model", "PARWIDTH_MODEL"}, {"--report", "PARWIDTH_REPORT"},
                             {"--mode", "PARWIDTH_MODE"},   {"--cpus", "PARWIDTH_CPUS"},
                             {"--pin", "PARWIDTH_PIN"},     {"--verbose", "PARWIDTH_VERBOSE"}};
  while (!a.done()) {
    if (a.flag("--")) break;
    if (a.flag("-h") || a.flag("--help")) {
      usage(stdout);
      return 0;
    }
    if (a.value("--lib", &lib, &missing)) {
      if (missing) break;
      continue;
    }
    if (a.flag("--no-calibrate")) {
      no_calibrate = true;
      continue;
    }
    bool matched = false;
    for (const Map& m : kMap) {
      if (a.value(m.flag, &v, &missing)) {
        matched = true;
        if (!missing) sets.emplace_back(m.var, v);
        break;
      }
    }
    if (missing) break;
    if (matched) continue;
    if (a.peek()[0] == '-') {
      fprintf(stderr, "parwidth run: error: unknown option '%s'\n", a.peek());
      return 2;
    }
    break;  // the command starts here (no "--")
  }
  if (missing) {
    fprintf(stderr, "parwidth run: error: an option is missing its value\n");
    return 2;
  }
  if (a.done()) {
    fprintf(stderr, "parwidth run: error: no command given\n");
    usage(stderr);
    return 2;
  }
  // Reject values the preload would only warn about: here a person is typing.
  for (const auto& set : sets) {
    const std::string& var = set.first;
    const std::string& val = set.second;
    std::vector<std::string> warns;
    pw::opt::options_parse([&](const char* n) { return var == n ? val.c_str() : nullptr; }, &warns);
    if (!warns.empty()) {
      fprintf(stderr, "parwidth run: error: %s\n", warns[0].c_str());
      return 2;
    }
  }
  const std::string so = pw::cli::find_preload_library(lib);
  if (so.empty() || access(so.c_str(), R_OK) != 0) {
    fprintf(stderr,
            "parwidth run: error: cannot find libparwidth.so (looked next to this program; "
            "set --lib or PARWIDTH_LIB)\n");
    return 2;
  }
  for (const auto& [var, val] : sets) setenv(var.c_str(), val.c_str(), 1);
  if (!no_calibrate) calibrate_first();
  std::string preload = so;
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);

  char** cmd = argv + a.index();
  execvp(cmd[0], cmd);
  const int err = errno;
  fprintf(stderr, "parwidth run: error: cannot run '%s': %s\n", cmd[0], strerror(err));
  return err == ENOENT ? 127 : 126;
}
