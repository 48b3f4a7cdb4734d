// cli/cmd_plan and cli/cmd_topo: the plan and the budget, as the preload would see them.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/args.h"
#include "cli/calibrate.h"
#include "cli/commands.h"
#include "cli/libraries.h"
#include "core/cache.h"
#include "core/json.h"
#include "core/planning.h"
#include "core/report.h"
#include "graph/graph.h"
#include "topology/topology.h"

namespace {

// Options from the environment, then the command line on top.
struct Common {
  pw::opt::Options opt;
  bool json = false;
  bool no_calibrate = false;
};

// Returns -1 to continue, else an exit code.
int common_args_parse(const char* who, int argc, char** argv, bool allow_plan_flags,
                      void (*usage)(FILE*), Common* c) {
  std::vector<std::string> warns;
  c->opt = pw::opt::options_parse(pw::cli::env_get, &warns);
  for (const std::string& w : warns) fprintf(stderr, "parwidth: warning: %s\n", w.c_str());
  namespace cl = pw::cli;
  std::vector<cl::Option> opts = {cl::flag("--json", &c->json), cl::flag("--smt", &c->opt.smt),
                                  cl::text("--topology", &c->opt.topology),
                                  cl::text("--cpus", &c->opt.cpus),
                                  cl::text("--cgroup", &c->opt.cgroup)};
  if (allow_plan_flags) {
    opts.push_back(cl::flag("--no-calibrate", &c->no_calibrate));
    opts.push_back(cl::text("--model", &c->opt.model));
    opts.push_back(cl::input_shapes("--input-shape", &c->opt.input_shapes));
    opts.push_back(cl::count("--pools", 1, 4096, &c->opt.pools));
    opts.push_back(cl::count("--intra", 1, 4096, &c->opt.threads));
  }
  return cl::options_scan(who, argc, argv, opts, cl::Ends::kNoRest, usage);
}

void plan_usage(FILE* f) {
  fputs(
      "usage: parwidth plan [--model FILE] [--topology T] [--pools N] [--intra N]\n"
      "                     [--cpus LIST] [--smt] [--cgroup DIR] [--json] [--no-calibrate]\n"
      "                     [--input-shape NAME=1x3x224x224]...\n"
      "\n"
      "Prints the plan parwidth would apply here (this process's CPU budget), or on\n"
      "a described machine: --topology takes an hwloc XML file or\n"
      "\"synthetic:package:2 core:24 pu:2\". PARWIDTH_* variables apply too.\n"
      "With a model whose operator costs are known, the plan is the fastest predicted\n"
      "schedule (PARWIDTH_PLAN=auto|measured|model|width); on this machine a budget\n"
      "without a stored calibration is calibrated first, once (--no-calibrate: the\n"
      "built-in machine model instead).\n"

      "--input-shape gives a graph input's shape for the model's operator costs\n"
      "(as PARWIDTH_INPUT_SHAPES; symbolic dims otherwise count as 1).\n",
      f);
}

void topo_usage(FILE* f) {
  fputs(
      "usage: parwidth topo [--topology T] [--cpus LIST] [--smt] [--cgroup DIR] [--json]\n"
      "\n"
      "Prints the CPU budget (sockets, cores, CPUs) and where each limit came from:\n"
      "affinity, cgroup cpuset and cpu.max quota, PARWIDTH_CPUS, local rank share;\n"
      "and which of the optional libraries the preload loads when present (hwloc,\n"
      "PAPI) this machine has.\n",
      f);
}

void budget_text_print(const pw::planning::Planned& p) {
  const pw::topo::Budget& b = p.budget;
  printf("machine: %s\n", p.machine.source.c_str());
  printf("budget:  %d cores on %zu socket(s), cpus %s\n", b.cores, b.sockets.size(),
         pw::topo::cpulist_format(b.cpus).c_str());
  for (size_t s = 0; s < b.sockets.size(); ++s) {
    printf("  socket %d:", b.sockets[s].os_index);
    for (const pw::topo::Core& c : b.sockets[s].cores)
      printf(" [%s]", pw::topo::cpulist_format(c.pus).c_str());
    printf("\n");
  }
  for (const std::string& n : b.notes) printf("  %s\n", n.c_str());
  printf("  local share: rank %d of %d (%s)\n", b.local_rank, b.local_size, p.local_from.c_str());
}

int plan_or_fail(const Common& c, pw::planning::Planned* p) {
  std::string err;
  if (!pw::planning::plan_process(c.opt, pw::cli::env_get, nullptr, p, &err)) {
    fprintf(stderr, "parwidth: error: %s\n", err.c_str());
    return 2;
  }
  for (const std::string& w : p->warnings) fprintf(stderr, "parwidth: warning: %s\n", w.c_str());
  return 0;
}

}  // namespace

int pw_cmd_plan(int argc, char** argv) {
  Common c;
  if (int rc = common_args_parse("parwidth plan", argc, argv, true, plan_usage, &c); rc >= 0)
    return rc;
  pw::planning::Planned p;
  if (!c.opt.model.empty()) {
    // Here a person asked for this model: an unreadable one is an error, not a warning.
    std::string err;
    std::vector<std::string> shape_warnings;
    if (!pw::planning::graph_summary(c.opt.model, &p.graph, &err, c.opt.input_shapes,
                                     &shape_warnings)) {
      fprintf(stderr, "parwidth: error: %s: %s\n", c.opt.model.c_str(), err.c_str());
      return 2;
    }
    for (const std::string& w : shape_warnings)
      fprintf(stderr, "parwidth: warning: %s\n", w.c_str());
  }
  if (int rc = plan_or_fail(c, &p)) return rc;
  // Calibrate once per machine and budget when the model would plan here.
  if (!c.no_calibrate && c.opt.topology.empty() && p.plan.source == "model" &&
      !p.calibration_found) {
    const std::string dir = pw::cache::cache_dir(pw::cli::env_get);
    std::string path, err;
    if (pw::cli::calibrate_budget(p, dir, true, &path, &err)) {
      pw::planning::Planned again;
      again.graph = p.graph;
      if (int rc = plan_or_fail(c, &again)) return rc;
      p = again;
    } else {
      fprintf(stderr, "parwidth: warning: calibration failed (%s); using the built-in model\n",
              err.c_str());
    }
  }
  if (c.json) {
    pw::json::Writer w;
    w.begin_object();
    w.key("machine").value(p.machine.source);
    w.key("budget").raw(pw::report::budget_json(p.budget));
    w.key("graph").raw(pw::report::graph_json(p.graph));
    w.key("plan").raw(pw::report::plan_json(p.plan));
    w.key("warnings").strings(p.warnings);
    w.end_object();
    printf("%s\n", w.str().c_str());
    return 0;
  }
  budget_text_print(p);
  if (p.graph.known)
    printf("graph:   %s: heavy %ld, layers %ld, avg width %ld, max level width %ld\n",
           p.graph.source.c_str(), p.graph.heavy, p.graph.layers, p.graph.avg_width,
           p.graph.max_level_width);
  printf("plan:    %d pool(s) x %d thread(s) over %d slot(s)\n", p.plan.pools, p.plan.threads,
         p.plan.slots);
  for (size_t i = 0; i < p.plan.core_sets.size(); ++i)
    printf("  pool %zu: cpus %s\n", i, pw::topo::cpulist_format(p.plan.core_sets[i]).c_str());
  for (const std::string& n : p.plan.notes) printf("  %s\n", n.c_str());
  printf("  source: %s%s%s\n", p.plan.source.c_str(), p.plan.source_detail.empty() ? "" : ": ",
         p.plan.source_detail.c_str());
  for (const pw::gov::Plan::Predicted& x : p.plan.predicted)
    printf("  predicted %d x %d%s: %.6g s%s\n", x.pools, x.threads, x.spans ? " spanning" : "",
           x.seconds, x.pools == p.plan.pools && x.threads == p.plan.threads ? "  <- chosen" : "");
  return 0;
}

int pw_cmd_topo(int argc, char** argv) {
  Common c;
  if (int rc = common_args_parse("parwidth topo", argc, argv, false, topo_usage, &c); rc >= 0)
    return rc;
  pw::planning::Planned p;
  if (int rc = plan_or_fail(c, &p)) return rc;
  const std::vector<pw::cli::OptionalLibrary> libs = pw::cli::optional_libraries_probe();
  if (c.json) {
    pw::json::Writer w;
    w.begin_object();
    w.key("machine").value(p.machine.source);
    w.key("machine_sockets").begin_array();
    for (const pw::topo::Socket& s : p.machine.sockets) {
      w.begin_object().key("os_index").value(s.os_index).key("cores").begin_array();
      for (const pw::topo::Core& core : s.cores) w.ints(core.pus);
      w.end_array().end_object();
    }
    w.end_array();
    w.key("budget").raw(pw::report::budget_json(p.budget));
    w.key("local_from").value(p.local_from);
    w.key("libraries").begin_array();
    for (const pw::cli::OptionalLibrary& l : libs) {
      w.begin_object().key("name").value(l.name).key("soname").value(l.soname);
      w.key("package").value(l.package).key("found").value(l.found);
      w.key("path").value(l.path).key("use").value(l.use).end_object();
    }
    w.end_array();
    w.key("warnings").strings(p.warnings);
    w.end_object();
    printf("%s\n", w.str().c_str());
    return 0;
  }
  budget_text_print(p);
  // One line a person can paste into a bug report, then what each one is for.
  std::string found, missing;
  for (const pw::cli::OptionalLibrary& l : libs) {
    std::string& list = l.found ? found : missing;
    list += (list.empty() ? "" : ", ") + std::string(l.name);
  }
  printf("libraries: found %s; not found %s\n", found.empty() ? "none" : found.c_str(),
         missing.empty() ? "none" : missing.c_str());
  for (const pw::cli::OptionalLibrary& l : libs)
    printf("  %-9s %s: %s\n            %s\n", l.name, l.found ? "found" : "not found",
           l.path.c_str(), l.use);
  return 0;
}
