// cli/cmd_run: `parwidth run -- cmd`: set up the preload and options, then exec.
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/calibrate.h"
#include "cli/commands.h"
#include "cli/locate.h"
#include "core/cache.h"
#include "core/options.h"
#include "core/planning.h"

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
    fprintf(f, "  PARWIDTH_%-12s %-22s default %s\n      %s\n", o.name.c_str(), o.type.c_str(),
            o.def.c_str(), o.help.c_str());
  fputs("\nExit status: CMD's own; 2 for a usage error; 126/127 if CMD cannot be run.\n", f);
}

// Calibrates this machine and budget once, before CMD, when the model may plan
// there and no calibration is stored. Problems are warnings: CMD runs anyway.
void calibrate_first() {
  const pw::opt::EnvLookup env = pw::cli::env_get;
  std::vector<std::string> warns;
  pw::opt::Options o = pw::opt::options_parse(env, &warns);
  o.model.clear();  // the budget is all that is needed: no graph read here
  if (o.mode == pw::opt::Mode::kOff || o.pools > 0 || o.threads > 0 || !o.topology.empty() ||
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
  std::vector<std::pair<std::string, std::string>> sets;
  std::string lib;
  bool no_calibrate = false;
  int first = argc;
  namespace cl = pw::cli;
  std::vector<cl::Option> opts = {cl::text("--lib", &lib),
                                  cl::flag("--no-calibrate", &no_calibrate)};
  // These set the PARWIDTH_* variable of the same name; their values are checked below with
  // the preload's own parser.
  for (const char* var : {"PARWIDTH_POOLS", "PARWIDTH_INTRA", "PARWIDTH_MODEL", "PARWIDTH_REPORT",
                          "PARWIDTH_MODE", "PARWIDTH_CPUS", "PARWIDTH_PIN", "PARWIDTH_VERBOSE"}) {
    std::string flag = "--" + std::string(var + 9);
    for (char& c : flag) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    opts.push_back({flag, "a value", [&sets, var](const std::string& v, std::string*) {
                      sets.emplace_back(var, v);
                      return true;
                    }});
  }
  if (const int rc =
          cl::options_scan("parwidth run", argc, argv, opts, cl::Ends::kAtCommand, usage, &first);
      rc >= 0)
    return rc;
  if (first >= argc) {
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
  const std::string so = pw::cli::preload_library_find(lib);
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

  char** cmd = argv + first;
  execvp(cmd[0], cmd);
  const int err = errno;
  fprintf(stderr, "parwidth run: error: cannot run '%s': %s\n", cmd[0], strerror(err));
  return err == ENOENT ? 127 : 126;
}
