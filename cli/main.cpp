// cli/main: `parwidth <command>` dispatch and top-level help.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"
#include "cli/locate.h"

namespace {

const char kUsage[] =
    "usage: parwidth <command> [options]\n"
    "\n"
    "A thread governor for deep-learning programs on CPUs.\n"
    "\n"
    "commands:\n"
    "  run [options] -- CMD [ARGS...]     run CMD with libparwidth.so preloaded\n"
    "  plan [options]                     the plan for this process's budget, or a described "
    "machine\n"
    "  topo [options]                     the CPU budget, where each limit came from, optional "
    "libraries\n"
    "  width MODEL [--json]               a model graph's width statistics\n"
    "  sweep [options] -- CMD [ARGS...]   time CMD over a grid of pools x intra, the plan and the "
    "default\n"
    "  calibrate [--show]                 measure this budget's OpenMP scaling for the plan's "
    "model\n"
    "  node [--json] [--watch S]          the governed processes sharing this node\n"
    "  tune [options] -- CMD [ARGS...]    measure the best plan for CMD's graph here and store "
    "it\n"
    "  plans [--forget FP|--all]          the measured plans stored (tune, sweep --save)\n"
    "\n"
    "options:\n"
    "  --print-lib                        print the path of libparwidth.so, for\n"
    "                                     LD_PRELOAD=$(parwidth --print-lib) CMD\n"
    "  --version                          print the version\n"
    "  -h, --help                         this help\n"
    "\n"
    "Run `parwidth <command> --help` for a command's options. Every PARWIDTH_*\n"
    "environment option is listed by `parwidth run --help`.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return 2;
  }
  const char* cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    puts("parwidth " PW_VERSION);
    return 0;
  }
  if (!strcmp(cmd, "--print-lib")) {
    const std::string so = pw::cli::preload_library_find("");
    if (so.empty()) {
      fprintf(stderr, "parwidth: error: cannot read %s (PARWIDTH_LIB overrides)\n",
              getenv("PARWIDTH_LIB") ? getenv("PARWIDTH_LIB")
                                     : pw::cli::default_preload_path().c_str());
      return 1;
    }
    puts(so.c_str());
    return 0;
  }
  if (!strcmp(cmd, "run")) return pw_cmd_run(argc - 1, argv + 1);
  if (!strcmp(cmd, "plan")) return pw_cmd_plan(argc - 1, argv + 1);
  if (!strcmp(cmd, "topo")) return pw_cmd_topo(argc - 1, argv + 1);
  if (!strcmp(cmd, "width")) return pw_cmd_width(argc - 1, argv + 1);
  if (!strcmp(cmd, "sweep")) return pw_cmd_sweep(argc - 1, argv + 1);
  if (!strcmp(cmd, "calibrate")) return pw_cmd_calibrate(argc - 1, argv + 1);
  if (!strcmp(cmd, "node")) return pw_cmd_node(argc - 1, argv + 1);
  if (!strcmp(cmd, "tune")) return pw_cmd_tune(argc - 1, argv + 1);
  if (!strcmp(cmd, "plans")) return pw_cmd_plans(argc - 1, argv + 1);
  fprintf(stderr, "parwidth: error: unknown command '%s'\n%s", cmd, kUsage);
  return 2;
}
