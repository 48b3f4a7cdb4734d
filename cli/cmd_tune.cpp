// cli/cmd_tune: `parwidth tune -- cmd`: measure the (pools, intra) candidates around the
// predicted plan of cmd's graph by successive halving within a time budget, and store the
// best as the graph's measured plan on this budget (governor/plan_store, core/cache).
//
// Every measured run goes through the preload with PARWIDTH_POOLS / PARWIDTH_INTRA, like
// `parwidth sweep`'s grid (the first run, not counted, learns the graph and the predicted
// plan), and the time metric is sweep's (wall seconds, or --metric). Runs are interleaved:
// repeat r of every surviving candidate before repeat r + 1.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/budget.h"
#include "cli/commands.h"
#include "cli/locate.h"
#include "cli/measure.h"
#include "cli/store.h"
#include "core/json.h"
#include "core/planning.h"

namespace {

using pw::cli::summarize;

constexpr size_t kMaxCandidates = 12;

void usage(FILE* f) {
  fputs(
      "usage: parwidth tune [--budget-s S] [--repeat R] [--metric PATTERN] [--model FILE]\n"
      "                     [--json] [--lib PATH] -- CMD [ARGS...]\n"
      "\n"
      "Finds the fastest thread plan for CMD's model graph on this CPU budget by\n"
      "measuring, and stores it: later governed runs of that graph use it\n"
      "(PARWIDTH_PLAN=auto or measured; the report's plan says source \"measured\").\n"
      "\n"
      "A first governed run of CMD (not timed) gives the graph's fingerprint and the\n"
      "predicted plan (PARWIDTH_PLAN=model). Then up to 12 candidate (pools, intra)\n"
      "pairs around it (the predicted plan, its neighbours, the model's best predicted;\n"
      "oversubscribed ones up to pools x intra = 2 x cores included) run R times each,\n"
      "interleaved; the slower half is dropped and the rest run twice as often, until\n"
      "one is left or the budget is spent (two candidates are always measured). The\n"
      "best median is stored in XDG_CACHE_HOME/parwidth (else ~/.cache/parwidth).\n"
      "\n"
      "  --budget-s S     time for the whole search in seconds (default 60); no run\n"
      "                   starts that the median run so far would take past it\n"
      "  --repeat R       runs per candidate in the first round (default 2)\n"
      "  --metric REGEX   time each run by the number CMD prints that REGEX's first group\n"
      "                   captures (as `parwidth sweep`); default: wall seconds\n"
      "  --model FILE     CMD's model graph, when no framework hook reads it\n"
      "                   (PARWIDTH_MODEL for every run)\n"
      "  --json           print the result as one JSON object\n"
      "  --lib PATH       libparwidth.so (default: next to this program, or $PARWIDTH_LIB)\n"
      "\n"
      "`parwidth plans` lists what is stored, `parwidth plans --forget` removes it.\n"
      "Exit status: 0 stored; 1 if a run fails, prints no metric, or CMD's graph has no\n"
      "fingerprint (parwidth does not see its graph); 2 for a usage error.\n",
      f);
}

struct Candidate {
  int pools = 1, threads = 1;
  double predicted = -1;  // the model's seconds, < 0 when not predicted
  std::vector<double> runs;
  int rounds = 0;  // rounds it took part in
};

std::string label(const Candidate& c) {
  return "pools=" + std::to_string(c.pools) + " intra=" + std::to_string(c.threads);
}

double median(const Candidate& c) {
  return summarize(c.runs).median;
}

// Faster median first; ties to fewer threads, then fewer pools.
bool faster(const Candidate& a, const Candidate& b) {
  const double ma = median(a), mb = median(b);
  if (ma != mb) return ma < mb;
  if (a.pools * a.threads != b.pools * b.threads) return a.pools * a.threads < b.pools * b.threads;
  return a.pools < b.pools;
}

// The candidates around the predicted plan (p0, t0), the predicted plan first.
std::vector<Candidate> candidates_around(int p0, int t0, int cores,
                                         const std::vector<pw::gov::Plan::Predicted>& predicted) {
  const int most = 2 * cores;
  auto valid = [&](int p, int t) { return p >= 1 && p <= cores && t >= 1 && p * t <= most; };
  std::vector<Candidate> out;
  auto add = [&](int p, int t) {
    if (!valid(p, t)) return;
    for (const Candidate& c : out)
      if (c.pools == p && c.threads == t) return;
    Candidate c;
    c.pools = p;
    c.threads = t;
    for (const pw::gov::Plan::Predicted& x : predicted)
      if (x.pools == p && x.threads == t) c.predicted = x.seconds;
    out.push_back(c);
  };
  p0 = std::clamp(p0, 1, cores);
  t0 = std::clamp(t0, 1, std::max(1, most / p0));
  add(p0, t0);
  // Neighbours: one more or less, half and twice, of each; and for each of those pool
  // counts, the intra that fills the cores without oversubscribing.
  for (int p : {p0, p0 - 1, p0 + 1, p0 / 2, p0 * 2}) {
    for (int t : {t0, t0 - 1, t0 + 1, t0 / 2, t0 * 2}) add(p, t);
    if (p >= 1) add(p, cores / p);
  }
  // The model's best few, wherever they are.
  std::vector<pw::gov::Plan::Predicted> ranked = predicted;
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  for (size_t i = 0; i < ranked.size() && i < 8; ++i) add(ranked[i].pools, ranked[i].threads);
  // The predicted plan stays first; the rest by predicted time, else by distance.
  auto distance = [&](const Candidate& c) {
    return std::fabs(std::log(static_cast<double>(c.pools) / p0)) +
           std::fabs(std::log(static_cast<double>(c.threads) / t0));
  };
  std::stable_sort(out.begin() + 1, out.end(), [&](const Candidate& a, const Candidate& b) {
    if ((a.predicted >= 0) != (b.predicted >= 0)) return a.predicted >= 0;
    if (a.predicted >= 0 && a.predicted != b.predicted) return a.predicted < b.predicted;
    return distance(a) < distance(b);
  });
  if (out.size() > kMaxCandidates) out.resize(kMaxCandidates);
  return out;
}

void dir_remove(const std::string& dir) {
  for (const char* f : {"/report.json", "/runs.log"}) unlink((dir + f).c_str());
  rmdir(dir.c_str());
}

}  // namespace

int pw_cmd_tune(int argc, char** argv) {
  std::string model;
  double budget_s = 60;
  int repeat = 2;
  namespace cl = pw::cli;
  cl::Command command;
  if (const int rc =
          cl::command_scan("tune", argc, argv,
                           {cl::seconds("--budget-s", 1e7, &budget_s),
                            cl::count("--repeat", 1, 1000, &repeat), cl::text("--model", &model)},
                           usage, &command);
      rc >= 0)
    return rc;
  pw::opt::Options opt;
  pw::planning::Planned planned;
  std::string err;
  const bool budgeted = cl::budget_plan(&planned, &err, &opt);
  if (!opt.topology.empty()) {
    fprintf(stderr,
            "parwidth tune: error: PARWIDTH_TOPOLOGY describes another machine; tuning "
            "measures this one\n");
    return 2;
  }
  if (!budgeted) {
    fprintf(stderr, "parwidth tune: error: %s\n", err.c_str());
    return 2;
  }
  const int cores = std::max(1, planned.budget.cores);

  const char* tmp = getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/parwidth-tune-XXXXXX";
  if (!mkdtemp(dir.data())) {
    fprintf(stderr, "parwidth tune: error: cannot create %s: %s\n", dir.c_str(), strerror(errno));
    return 1;
  }
  const std::string log_path = dir + "/runs.log", report = dir + "/report.json";
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  auto fail = [&](const std::string& what) {
    fprintf(stderr, "parwidth tune: error: %s (output of the runs in %s)\n", what.c_str(),
            log_path.c_str());
    if (log_fd >= 0) close(log_fd);
    return 1;
  };
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<std::pair<std::string, std::string>> extra;
  if (!model.empty()) extra.emplace_back("PARWIDTH_MODEL", model);

  // 1. The graph and the predicted plan, from a governed run's report.
  pw::cli::RunSpec learn;
  learn.report = report;
  learn.env = extra;
  // The model's prediction, not a plan stored earlier (width stays width).
  if (opt.plan != pw::gov::PlanMode::kWidth) learn.env.emplace_back("PARWIDTH_PLAN", "model");
  if (log_fd >= 0) dprintf(log_fd, "=== learning run (report %s)\n", report.c_str());
  fprintf(stderr, "parwidth tune: learning the graph and the predicted plan (one governed run)\n");
  {
    std::string out, why;
    double secs = 0;
    if (!pw::cli::run_once(command.cmd, learn, command.so, log_fd, &out, &secs, &why))
      return fail("the first governed run failed: " + why);
  }
  pw::cli::ReportPlan rp;
  if (!pw::cli::report_read(report, &rp, &err)) return fail(err);
  if (rp.fingerprint.empty())
    return fail(
        "CMD's governed run reported no graph fingerprint: parwidth does not see its model "
        "graph (give it with --model FILE; the example engine's sessions and PARWIDTH_MODEL "
        "graphs have one)");

  // 2. Successive halving over the candidates around the predicted plan.
  std::vector<Candidate> cands = candidates_around(rp.pools, rp.threads, cores, rp.predicted);
  std::vector<size_t> alive(cands.size());
  for (size_t i = 0; i < alive.size(); ++i) alive[i] = i;
  std::vector<double> durations;  // wall seconds of each timed run
  const size_t must = std::min<size_t>(2, cands.size());
  size_t measured = 0;  // candidates with at least one run
  int target = repeat, round = 0;
  bool out_of_time = false;
  while (!out_of_time) {
    ++round;
    for (size_t i : alive) cands[i].rounds = round;
    bool more = true;
    while (more && !out_of_time) {
      more = false;
      for (size_t i : alive) {
        Candidate& c = cands[i];
        if (static_cast<int>(c.runs.size()) >= target) continue;
        if (measured >= must && !durations.empty()) {
          if (elapsed() + summarize(durations).median > budget_s) {
            out_of_time = true;
            break;
          }
        }
        pw::cli::RunSpec spec;
        spec.pools = c.pools;
        spec.threads = c.threads;
        spec.env = extra;
        std::string out, why;
        double secs = 0, value = 0;
        if (log_fd >= 0)
          dprintf(log_fd, "=== %s, round %d, run %zu\n", label(c).c_str(), round,
                  c.runs.size() + 1);
        if (!pw::cli::run_once(command.cmd, spec, command.so, log_fd, &out, &secs, &why))
          return fail("run failed: " + label(c) + ": " + why);
        if (!command.metric.value(out, secs, &value))
          return fail("run failed: " + label(c) + ": no match for --metric '" +
                      command.metric.pattern() + "' in its output");
        if (c.runs.empty()) ++measured;
        c.runs.push_back(value);
        durations.push_back(secs);
        fprintf(stderr, "parwidth tune: round %d %s run %zu: %.6g (%.0f of %.0f s)\n", round,
                label(c).c_str(), c.runs.size(), value, elapsed(), budget_s);
        more = more || static_cast<int>(c.runs.size()) < target;
      }
    }
    // Candidates the budget left unmeasured cannot compete.
    alive.erase(
        std::remove_if(alive.begin(), alive.end(), [&](size_t i) { return cands[i].runs.empty(); }),
        alive.end());
    if (out_of_time || alive.size() <= 1) break;
    std::sort(alive.begin(), alive.end(),
              [&](size_t x, size_t y) { return faster(cands[x], cands[y]); });
    alive.resize((alive.size() + 1) / 2);
    if (alive.size() <= 1) break;
    target *= 2;
  }
  if (log_fd >= 0) close(log_fd);
  size_t best = alive.front();
  for (size_t i : alive)
    if (faster(cands[i], cands[best])) best = i;

  // 3. Store it.
  const Candidate& b = cands[best];
  const pw::cli::Summary s = summarize(b.runs);
  pw::gov::MeasuredPlan m;
  m.known = true;
  m.pools = b.pools;
  m.threads = b.threads;
  m.seconds = s.median;
  m.min = s.min;
  m.max = s.max;
  m.runs = static_cast<int>(b.runs.size());
  m.created = static_cast<int64_t>(time(nullptr));
  m.by = "tune";
  m.metric = command.metric.describe();
  std::string path;
  if (!pw::cli::measured_save(planned, rp.fingerprint, m, &path, &err)) {
    fprintf(stderr, "parwidth tune: error: cannot store the plan: %s\n", err.c_str());
    return 1;
  }
  dir_remove(dir);

  const Candidate& first = cands[0];
  if (command.json) {
    pw::json::Writer w;
    w.begin_object();
    w.key("fingerprint").value(rp.fingerprint);
    w.key("graph_source").value(rp.graph_source);
    w.key("cores").value(cores);
    w.key("metric").value(command.metric.describe());
    w.key("predicted").begin_object();
    w.key("pools").value(first.pools).key("intra").value(first.threads);
    w.key("source").value(rp.source).end_object();
    w.key("budget_s").value(budget_s);
    w.key("out_of_time").value(out_of_time);
    w.key("candidates").begin_array();
    for (const Candidate& c : cands) {
      const pw::cli::Summary cs = summarize(c.runs);
      w.begin_object();
      w.key("pools").value(c.pools).key("intra").value(c.threads);
      w.key("oversubscribed").value(c.pools * c.threads > cores);
      w.key("rounds").value(c.rounds);
      w.key("runs").begin_array();
      for (double x : c.runs) w.value(x);
      w.end_array();
      w.key("median").value(cs.median).key("min").value(cs.min).key("max").value(cs.max);
      w.end_object();
    }
    w.end_array();
    w.key("best").begin_object();
    w.key("pools").value(m.pools).key("intra").value(m.threads).key("median").value(m.seconds);
    w.key("runs").value(m.runs).end_object();
    w.key("stored").value(path);
    w.end_object();
    printf("%s\n", w.str().c_str());
    return 0;
  }
  printf("graph %s (%s), %d core(s); predicted plan pools=%d intra=%d (source %s)\n",
         rp.fingerprint.c_str(), rp.graph_source.c_str(), cores, first.pools, first.threads,
         rp.source.c_str());
  printf("%-24s %6s %6s %12s %12s %12s\n", "candidate", "rounds", "runs", "median", "min", "max");
  for (const Candidate& c : cands) {
    const pw::cli::Summary cs = summarize(c.runs);
    std::string mark;
    if (&c == &first) mark += " predicted";
    if (&c == &b) mark += " best";
    if (c.pools * c.threads > cores) mark += " oversubscribed";
    if (c.runs.empty())
      printf("%-24s %6d %6d %12s %12s %12s%s\n", label(c).c_str(), c.rounds, 0, "-", "-", "-",
             mark.c_str());
    else
      printf("%-24s %6d %6zu %12.6g %12.6g %12.6g%s\n", label(c).c_str(), c.rounds, c.runs.size(),
             cs.median, cs.min, cs.max, mark.c_str());
  }
  if (out_of_time) printf("the budget (%.0f s) ended the search in round %d\n", budget_s, round);
  printf("stored: pools=%d intra=%d, median %.6g %s over %d runs (%s)\n", m.pools, m.threads,
         m.seconds, command.metric.wall() ? "s" : "(--metric)", m.runs, path.c_str());
  return 0;
}
