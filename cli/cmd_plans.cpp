// cli/cmd_plans: `parwidth plans`: the measured plans stored in the user's cache
// (`parwidth tune`, `parwidth sweep --save`), and `--forget` to remove them.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/budget.h"
#include "cli/commands.h"
#include "core/cache.h"
#include "core/json.h"
#include "core/planning.h"

namespace {

void usage(FILE* f) {
  fputs(
      "usage: parwidth plans [--json]\n"
      "       parwidth plans --forget FINGERPRINT | --forget --all\n"
      "\n"
      "Lists the measured plans stored in XDG_CACHE_HOME/parwidth (else\n"
      "~/.cache/parwidth) by `parwidth tune` and `parwidth sweep --save`: one per graph\n"
      "fingerprint and CPU budget, with the plan (pools x intra), its median and how\n"
      "many runs, when and by which command it was measured. \"here\" marks the ones\n"
      "for this machine and budget, which governed runs of that graph use\n"
      "(PARWIDTH_PLAN=auto or measured). A file that does not validate is listed with\n"
      "the reason; governed runs ignore it with one warning.\n"
      "\n"
      "  --forget FINGERPRINT   remove the plans of that graph (every budget); a\n"
      "                         unique prefix of the fingerprint is enough\n"
      "  --forget --all         remove every stored plan\n"
      "  --json                 the list as one JSON object\n"
      "\n"
      "Exit status: 0; 1 if --forget matched nothing or a file cannot be removed; 2 for a\n"
      "usage error.\n",
      f);
}

}  // namespace

int pw_cmd_plans(int argc, char** argv) {
  bool json = false, forget = false, all = false;
  std::string which;
  namespace cl = pw::cli;
  // --forget takes a fingerprint, or --all as its value ("--forget --all").
  const std::vector<cl::Option> opts = {
      cl::flag("--json", &json),
      cl::flag("--all", &all),
      {"--forget", "a graph fingerprint or --all", [&](const std::string& v, std::string*) {
         forget = true;
         if (v == "--all")
           all = true;
         else
           which = v;
         return true;
       }}};
  if (const int rc = cl::options_scan("parwidth plans", argc, argv, opts, cl::Ends::kNoRest, usage);
      rc >= 0)
    return rc;
  if (all && !forget) {
    fprintf(stderr, "parwidth plans: error: --all goes with --forget\n");
    return 2;
  }
  const std::string dir = pw::cache::cache_dir(pw::cli::env_get);
  const std::vector<pw::cache::PlanFile> files =
      pw::cache::plan_files(dir, static_cast<int64_t>(time(nullptr)));

  if (forget) {
    // A prefix must name one graph: removing several graphs' plans by a typo is not.
    std::vector<std::string> graphs;
    std::vector<const pw::cache::PlanFile*> hit;
    for (const pw::cache::PlanFile& f : files) {
      // The fingerprint is in the name too: a corrupt file of that graph goes as well.
      std::string g = f.stored.graph;
      if (g.empty()) {
        const size_t dash = f.name.find('-', 5);
        g = f.name.substr(5, dash == std::string::npos ? 0 : dash - 5);
      }
      if (!all && (which.empty() || g.compare(0, which.size(), which) != 0)) continue;
      hit.push_back(&f);
      bool seen = false;
      for (const std::string& x : graphs) seen = seen || x == g;
      if (!seen) graphs.push_back(g);
    }
    if (!all && graphs.size() > 1) {
      fprintf(stderr, "parwidth plans: error: '%s' matches %zu graphs; give more digits\n",
              which.c_str(), graphs.size());
      return 1;
    }
    if (hit.empty()) {
      fprintf(stderr, "parwidth plans: error: no stored plan%s%s in %s\n", all ? "" : " for graph ",
              all ? "" : which.c_str(), dir.c_str());
      return all ? 0 : 1;
    }
    int rc = 0;
    size_t removed = 0;
    for (const pw::cache::PlanFile* f : hit) {
      if (unlink(f->path.c_str()) == 0) {
        ++removed;
      } else {
        fprintf(stderr, "parwidth plans: error: cannot remove %s: %s\n", f->path.c_str(),
                strerror(errno));
        rc = 1;
      }
    }
    printf("removed %zu stored plan(s)%s%s\n", removed, all ? "" : " of graph ",
           all ? "" : graphs[0].c_str());
    return rc;
  }

  // Which ones are for this machine and budget (those a governed run here uses).
  std::string machine, budget;
  {
    pw::planning::Planned p;
    std::string err;
    if (pw::cli::budget_plan(&p, &err)) {
      machine = pw::cache::machine_id(p.machine);
      budget = pw::cache::budget_id(p.budget);
    }
  }
  auto here = [&](const pw::cache::PlanFile& f) {
    return f.status == pw::Status::kOk && f.stored.machine == machine && f.stored.budget == budget;
  };
  if (json) {
    pw::json::Writer w;
    w.begin_object();
    w.key("dir").value(dir);
    w.key("plans").begin_array();
    for (const pw::cache::PlanFile& f : files) {
      w.begin_object();
      w.key("file").value(f.path);
      w.key("valid").value(f.status == pw::Status::kOk);
      if (f.status != pw::Status::kOk) {
        w.key("why").value(f.why);
        w.end_object();
        continue;
      }
      const pw::gov::MeasuredPlan& m = f.stored.plan;
      w.key("fingerprint").value(f.stored.graph);
      w.key("machine").value(f.stored.machine);
      w.key("budget").value(f.stored.budget);
      w.key("here").value(here(f));
      w.key("pools").value(m.pools).key("intra").value(m.threads);
      w.key("median").value(m.seconds).key("min").value(m.min).key("max").value(m.max);
      w.key("runs").value(m.runs).key("metric").value(m.metric);
      w.key("by").value(m.by).key("created").value(static_cast<long long>(m.created));
      w.key("version").value(m.version).key("how").value(m.how);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    printf("%s\n", w.str().c_str());
    return 0;
  }
  if (files.empty()) {
    printf("no measured plans stored in %s (`parwidth tune -- CMD` measures one)\n",
           dir.empty() ? "(no cache directory)" : dir.c_str());
    return 0;
  }
  printf("%-16s  %-28s  %-9s  %s\n", "graph", "budget", "plan", "measured");
  for (const pw::cache::PlanFile& f : files) {
    if (f.status != pw::Status::kOk) {
      printf("%-16s  %s: %s\n", "?", f.name.c_str(), f.why.c_str());
      continue;
    }
    const pw::gov::MeasuredPlan& m = f.stored.plan;
    const std::string plan = std::to_string(m.pools) + " x " + std::to_string(m.threads);
    printf("%-16s  %-28s  %-9s  %s%s\n", f.stored.graph.c_str(), f.stored.budget.c_str(),
           plan.c_str(), m.how.c_str(), here(f) ? "  [here]" : "");
  }
  printf("(%s; `parwidth plans --forget FINGERPRINT` removes one graph's)\n", dir.c_str());
  return 0;
}
