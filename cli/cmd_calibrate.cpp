// cli/cmd_calibrate: measure this budget's per-core throughput and OpenMP
// scaling with the parwidth-calibrate helper, store it in the user's cache.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/budget.h"
#include "cli/calibrate.h"
#include "cli/child.h"
#include "cli/commands.h"
#include "cli/locate.h"
#include "core/cache.h"
#include "core/planning.h"
#include "topology/topology.h"

namespace pw::cli {
namespace {

// One CPU of each physical core of the budget, in the budget's order: where the
// helper pins its threads, as governed pools and teams are pinned.
std::string core_list(const topo::Budget& b) {
  std::vector<int> cpus;
  for (const topo::Socket& s : b.sockets)
    for (const topo::Core& c : s.cores)
      if (!c.pus.empty()) cpus.push_back(c.pus[0]);
  return topo::cpulist_format(cpus);
}

// What the helper measures of sockets and SMT: the first socket's cores (one
// CPU each), a CPU of a core on another socket, a sibling of the first core;
// "-" for what the budget does not have.
struct Extra {
  std::string socket0 = "-", far = "-", sibling = "-";
};

Extra extra_of(const topo::Budget& b) {
  Extra e;
  if (b.sockets.size() > 1 && !b.sockets[1].cores.empty() && !b.sockets[1].cores[0].pus.empty()) {
    std::vector<int> first;
    for (const topo::Core& c : b.sockets[0].cores)
      if (!c.pus.empty()) first.push_back(c.pus[0]);
    if (!first.empty()) {
      e.socket0 = topo::cpulist_format(first);
      e.far = std::to_string(b.sockets[1].cores[0].pus[0]);
    }
  }
  if (!b.sockets.empty() && !b.sockets[0].cores.empty() && b.sockets[0].cores[0].pus.size() > 1)
    e.sibling = std::to_string(b.sockets[0].cores[0].pus[1]);
  return e;
}

// Runs the helper ungoverned (no preload in its environment) and collects stdout.
bool helper_run(int max_team, const std::string& cores, const Extra& extra, std::string* out,
                std::string* why) {
  const std::string path = calibration_helper_path();
  if (path.empty() || access(path.c_str(), X_OK) != 0) {
    *why = "helper " + path + " not found (built with OpenMP only)";
    return false;
  }
  int status = 0;
  auto exec = [&] {
    unsetenv("LD_PRELOAD");
    unsetenv("OMP_NUM_THREADS");
    // The helper pins each team thread to a core itself, thread i to the
    // budget's core i (teams larger than the cores wrap around them), as
    // governed pools pin their teams. The runtime's own binding stays off: with
    // OMP_PROC_BIND=close a team of 2 x cores put two threads on each core, and
    // a later team of 2 reused a worker bound beside the master (libgomp does
    // not rebind the threads it keeps), so every fitting team measured after
    // an oversubscribed one shared one core.
    setenv("OMP_PROC_BIND", "false", 1);
    unsetenv("OMP_PLACES");
    unsetenv("GOMP_CPU_AFFINITY");
    unsetenv("KMP_AFFINITY");
    setenv("PARWIDTH_MODE", "off", 1);
    const std::string team = std::to_string(max_team);
    execl(path.c_str(), path.c_str(), team.c_str(), cores.c_str(), "0.03", extra.socket0.c_str(),
          extra.far.c_str(), extra.sibling.c_str(), static_cast<char*>(nullptr));
  };
  if (!child_output(exec, -1, gov::kCalibrationMaxBytes, out, &status, why)) return false;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return *why = "helper failed", false;
  return true;
}

}  // namespace

bool calibrate_budget(const planning::Planned& p, const std::string& dir, bool progress,
                      std::string* path, std::string* why) {
  if (dir.empty()) return *why = "no cache directory (set XDG_CACHE_HOME or HOME)", false;
  const int cores = std::max(1, p.budget.cores);
  if (progress)
    fprintf(stderr, "parwidth: calibrating %d core(s), teams 1..%d (a few seconds, once)...\n",
            cores, 2 * cores);
  const Extra extra = extra_of(p.budget);
  if (progress) {
    if (extra.far == "-")
      fprintf(stderr,
              "parwidth: one socket: the cross-socket team cost and a socket's bandwidth are not "
              "measured; the built-in values stand\n");
    if (extra.sibling == "-")
      fprintf(stderr,
              "parwidth: no SMT siblings in this budget: their gain is not measured; the "
              "built-in value stands\n");
  }
  std::string text;
  if (!helper_run(2 * cores, core_list(p.budget), extra, &text, why)) return false;
  gov::Calibration c;
  c.machine = cache::machine_id(p.machine);
  c.budget = cache::budget_id(p.budget);
  c.created = static_cast<int64_t>(time(nullptr));
  c.model.cores = cores;
  // The helper's lines are the body of a calibration file.
  std::string body = "parwidth-calibration 1\nmachine " + c.machine + "\nbudget " + c.budget +
                     "\ncreated " + std::to_string(c.created) + "\ncores " + std::to_string(cores) +
                     "\nop_overhead_s " + "3e-06\n" + text + "end\n";
  gov::Calibration check;
  const Status st = gov::calibration_parse(body, c.machine, c.budget, c.created, &check, why);
  if (st != Status::kOk) {
    *why = "the helper's measurements do not validate: " + *why;
    return false;
  }
  const std::string name = cache::calibration_name(c.machine, c.budget);
  if (!cache::file_write_atomic(dir, name, gov::calibration_format(check), why)) return false;
  *path = dir + "/" + name;
  return true;
}

bool calibration_stored(const planning::Planned& p, const std::string& dir) {
  bool found = false;
  std::string warning;
  cache::calibration_load(dir, cache::machine_id(p.machine), cache::budget_id(p.budget),
                          p.budget.cores, cache::cpu_traits(p.machine),
                          static_cast<int64_t>(time(nullptr)), &found, &warning);
  return found;
}

}  // namespace pw::cli

namespace {

void usage(FILE* f) {
  fputs(
      "usage: parwidth calibrate [--show]\n"
      "\n"
      "Measures this CPU budget's per-core throughput and OpenMP scaling (team sizes\n"
      "1..2 x cores, six operator sizes), what waking and signalling a thread on\n"
      "another core costs, and what an OpenMP team pays for waking its sleeping\n"
      "workers, in a helper process; on several sockets, what a team across two\n"
      "costs and one socket's memory bandwidth; with SMT siblings, what one adds. Where\n"
      "the budget has one socket or no siblings it says so and keeps built-in values.\n"
      "It stores the result under\n"
      "XDG_CACHE_HOME/parwidth (else ~/.cache/parwidth) for this machine and a budget\n"
      "of this shape (cores per socket, PUs, quota).\n"
      "--show prints the stored calibration instead.\n",
      f);
}

}  // namespace

int pw_cmd_calibrate(int argc, char** argv) {
  bool show = false;
  const std::vector<pw::cli::Option> opts = {pw::cli::flag("--show", &show)};
  if (const int rc = pw::cli::options_scan("parwidth calibrate", argc, argv, opts,
                                           pw::cli::Ends::kNoRest, usage);
      rc >= 0)
    return rc;
  pw::planning::Planned p;
  std::string err;
  if (!pw::cli::budget_plan(&p, &err)) {
    fprintf(stderr, "parwidth: error: %s\n", err.c_str());
    return 1;
  }
  const std::string dir = pw::cache::cache_dir(pw::cli::env_get);
  if (show) {
    bool found = false;
    std::string warning;
    const pw::gov::MachineModel m = pw::cache::calibration_load(
        dir, pw::cache::machine_id(p.machine), pw::cache::budget_id(p.budget), p.budget.cores,
        pw::cache::cpu_traits(p.machine), static_cast<int64_t>(time(nullptr)), &found, &warning);
    if (!warning.empty()) fprintf(stderr, "parwidth: warning: %s\n", warning.c_str());
    printf("%s\n", m.detail.c_str());
    for (const pw::gov::SizeRow& r : m.rows) {
      printf("  %10.3g FLOPs:", r.flops);
      for (double s : r.seconds) printf(" %.3g", s);
      printf("\n");
    }
    printf(
        "  memory copy %.3g bytes/s; waking a pool %.3g s, signalling one %.3g s, waking a "
        "team %.3g s\n",
        m.bytes_per_s, m.wake_s, m.notify_s, m.team_wake_s);
    if (m.cache_bytes > 0)
      printf("  within the level-2 cache (%lld KiB per core): %.3g bytes/s\n",
             static_cast<long long>(m.cache_bytes >> 10), m.cache_bytes_per_s);
    if (m.span_measured)
      printf("  a team across sockets: %.3gx the compute, %.3g s more per region (measured)\n",
             m.span_factor, m.span_region_s);
    else
      printf("  a team across sockets: %.3gx the compute, %.3g s more per region (built in: %s)\n",
             m.span_factor, m.span_region_s,
             p.budget.sockets.size() > 1 ? "not measured" : "one socket");
    if (m.socket_bytes_measured)
      printf("  one socket's memory: %.3g bytes/s (measured)\n", m.socket_bytes_per_s);
    else
      printf("  one socket's memory: 8 x %.3g bytes/s (built in)\n", m.bytes_per_s);
    printf("  an SMT sibling adds %.0f%% of a core (%s)\n", 100 * m.smt_gain,
           m.smt_measured ? "measured" : "built in: no siblings measured");
    if (!m.region_s.empty()) {
      printf("  a parallel region's fork and join, teams of 1..%zu:", m.region_s.size());
      for (double s : m.region_s) printf(" %.3g", s);
      printf("\n");
    }
    return found ? 0 : 1;
  }
  std::string path;
  if (!pw::cli::calibrate_budget(p, dir, true, &path, &err)) {
    fprintf(stderr, "parwidth: error: calibration failed: %s\n", err.c_str());
    return 1;
  }
  printf("calibration stored: %s\n", path.c_str());
  return 0;
}
