// cli/cmd_sweep: `parwidth sweep -- cmd`: runs cmd under every (pools, intra) of a grid
// (oversubscribed ones included, up to pools x intra = 2 x cores), under parwidth's own plan,
// under Intel's recommended settings, under TensorFlow's default (inter = intra = logical
// CPUs) and ungoverned, and says how far each is from the best configuration found.
//
// Every governed run goes through the preload with PARWIDTH_POOLS / PARWIDTH_INTRA, so a
// framework hook (hooks/engine.cpp, hooks/tf.cpp) writes them into the framework's own
// options. Runs are interleaved (repeat r of every configuration before repeat r + 1), so
// a slow phase of the machine spreads over all configurations instead of one, and each
// round runs them in an order of its own (round_order): in a fixed order each configuration
// always follows the same one, and whatever a run leaves behind (a busy neighbour's
// scheduler state, the caches, a clock that has not settled) always lands on the same
// next configuration. Two runs of one configuration under two names (the plan and the
// grid cell it chose) then differed by a steady few percent.
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
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
#include "governor/schedule.h"
#include "topology/affinity.h"

namespace {

using pw::cli::summarize;
using pw::cli::Summary;

// The order in which round `round` runs `n` configurations: the first round in the
// given order, every later one a permutation of its own (Fisher-Yates over a
// splitmix64 sequence seeded by the round), the same on every machine and every run.
std::vector<size_t> round_order(size_t n, int round) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (round == 0) return order;
  uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(round);
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[next() % i]);
  return order;
}

void usage(FILE* f) {
  fputs(
      "usage: parwidth sweep [--pools LIST] [--intra LIST] [--repeat R] [--out DIR]\n"
      "                      [--metric PATTERN] [--json] [--save] [--lib PATH] -- CMD [ARGS...]\n"
      "\n"
      "Runs CMD under every configuration of a grid of inter-op pools x intra-op threads\n"
      "(through the preload, PARWIDTH_POOLS / PARWIDTH_INTRA), under parwidth's own plan,\n"
      "under Intel's recommended settings (pools = sockets, intra = physical cores), under\n"
      "TensorFlow's default (pools = intra = logical CPUs) and ungoverned (the program's\n"
      "defaults), R times each, interleaved (every configuration once per round, each\n"
      "round in an order of its own). Governed runs get\n"
      "PARWIDTH_NODE=off unless it is set: a configuration is measured as given, not\n"
      "shared with other governed processes on the node.\n"
      "\n"
      "  --pools LIST     pools to try, e.g. 1,2,4 or 1-4 (default 1..cores; the governor\n"
      "                   gives each pool one core at least, so more pools are clamped)\n"
      "  --intra LIST     threads per pool to try (default 1..2 x cores)\n"
      "                   Without both lists, only pairs with pools*intra <= 2 x cores are\n"
      "                   kept (cores: the physical cores of this process's budget); pairs\n"
      "                   over cores are marked oversubscribed.\n"
      "  --within N       only pairs with pools x intra <= N (with both lists too)\n"
      "  --repeat R       runs per configuration (default 3)\n"
      "  --out DIR        where sweep.csv, heatmap.svg, runs.log go (default parwidth-sweep)\n"
      "  --metric REGEX   time each run by the number CMD prints that REGEX's first group\n"
      "                   captures (e.g. 'time per iteration: ([0-9.]+) ms'); default: the\n"
      "                   whole process's wall time in seconds\n"
      "  --json           print the summary as one JSON object\n"
      "  --save           store the grid's best as the measured plan of CMD's graph on\n"
      "                   this budget, as `parwidth tune` does; later governed runs of\n"
      "                   that graph use it (`parwidth plans` lists it). Medians within 2%\n"
      "                   of the lowest count as a tie, which the fewest threads (then\n"
      "                   pools) win: a few runs cannot tell them apart, and the next\n"
      "                   sweep ranks them differently\n"
      "  --lib PATH       libparwidth.so (default: next to this program, or $PARWIDTH_LIB)\n"
      "\n"
      "Progress goes to stderr (a bar with ETA on a terminal, else one line per run).\n"
      "Exit status: 0; 1 if a run fails or prints no metric (named), or --save finds no\n"
      "graph fingerprint in the plan run's report; 2 for a usage error.\n",
      f);
}

struct Config {
  std::string name;            // "grid", "plan", "intel", "tf", "default"
  int pools = 0, threads = 0;  // 0 for plan/default until known
  std::vector<double> runs;
};

int logical_cpus() {
  std::vector<int> cpus;
  if (pw::topo::affinity_get(0, &cpus) != 0) return 1;
  return std::max(1, static_cast<int>(cpus.size()));
}

std::string label(const Config& c) {
  if (c.name == "grid")
    return "pools=" + std::to_string(c.pools) + " intra=" + std::to_string(c.threads);
  if (c.pools > 0)
    return c.name + " (pools=" + std::to_string(c.pools) + " intra=" + std::to_string(c.threads) +
           ")";
  return c.name;
}

std::string fmt_time(double s) {
  char b[32];
  const long t = std::lround(s);
  if (t >= 3600)
    snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else if (t >= 60)
    snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
  else
    snprintf(b, sizeof b, "%lds", t);
  return b;
}

// Green (best) to red (worst) on a log scale of median / best.
std::string colour(double v, double best, double worst) {
  double f = worst > best ? std::log(v / best) / std::log(worst / best) : 0;
  f = std::clamp(f, 0.0, 1.0);
  const int r = static_cast<int>(60 + 195 * f), gr = static_cast<int>(200 - 150 * f), b = 80;
  char s[16];
  snprintf(s, sizeof s, "#%02x%02x%02x", r, gr, b);
  return s;
}

std::string heatmap(const std::vector<Config>& grid, const std::vector<int>& pools,
                    const std::vector<int>& threads, const Config& plan, const Config& best,
                    int cores, const std::string& unit, const std::string& title) {
  const int cw = 90, ch = 44, left = 90, top = 60;
  const int w = left + cw * static_cast<int>(threads.size()) + 20;
  const int h = top + ch * static_cast<int>(pools.size()) + 70;
  double lo = 1e300, hi = 0;
  for (const Config& c : grid) {
    const double m = summarize(c.runs).median;
    lo = std::min(lo, m), hi = std::max(hi, m);
  }
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<text x=\"10\" y=\"20\" font-size=\"14\">" << title << "</text>\n";
  s << "<text x=\"10\" y=\"40\">median " << unit
    << " per configuration; rows: pools, columns: intra-op threads</text>\n";
  for (size_t j = 0; j < threads.size(); ++j)
    s << "<text x=\"" << left + cw * j + cw / 2 << "\" y=\"" << top - 6
      << "\" text-anchor=\"middle\">intra " << threads[j] << "</text>\n";
  for (size_t i = 0; i < pools.size(); ++i) {
    s << "<text x=\"10\" y=\"" << top + ch * i + ch / 2 + 4 << "\">pools " << pools[i]
      << "</text>\n";
    for (size_t j = 0; j < threads.size(); ++j) {
      const int x = left + cw * static_cast<int>(j), y = top + ch * static_cast<int>(i);
      const Config* c = nullptr;
      for (const Config& g : grid)
        if (g.pools == pools[i] && g.threads == threads[j]) c = &g;
      if (!c) {
        s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw << "\" height=\"" << ch
          << "\" fill=\"#eeeeee\" stroke=\"white\"/>\n";
        continue;
      }
      const double m = summarize(c->runs).median;
      char v[32];
      snprintf(v, sizeof v, "%.4g", m);
      std::string mark;
      if (c->pools == best.pools && c->threads == best.threads) mark += " best";
      if (c->pools == plan.pools && c->threads == plan.threads) mark += " plan";
      const bool over = c->pools * c->threads > cores;
      s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw << "\" height=\"" << ch
        << "\" fill=\"" << colour(m, lo, hi) << "\" stroke=\"" << (mark.empty() ? "white" : "black")
        << "\" stroke-width=\"" << (mark.empty() ? 1 : 3) << "\""
        << (over ? " stroke-dasharray=\"4 3\"" : "") << "/>\n";
      if (over)
        s << "<text x=\"" << x + 4 << "\" y=\"" << y + 11 << "\" font-size=\"9\">over</text>\n";
      s << "<text x=\"" << x + cw / 2 << "\" y=\"" << y + ch / 2 << "\" text-anchor=\"middle\">"
        << v << "</text>\n";
      if (!mark.empty())
        s << "<text x=\"" << x + cw / 2 << "\" y=\"" << y + ch / 2 + 14
          << "\" text-anchor=\"middle\" font-size=\"10\">" << mark.substr(1) << "</text>\n";
    }
  }
  s << "<text x=\"10\" y=\"" << h - 30 << "\">plan = parwidth's plan (pools=" << plan.pools
    << ", intra=" << plan.threads << "); best = lowest median of the grid</text>\n";
  s << "<text x=\"10\" y=\"" << h - 12 << "\">over = oversubscribed: pools x intra above the "
    << cores << " core(s) of the budget</text>\n";
  s << "</svg>\n";
  return s.str();
}

}  // namespace

int pw_cmd_sweep(int argc, char** argv) {
  std::string out_dir = "parwidth-sweep";
  std::vector<int> pools, threads;
  int repeat = 3;
  int within = 0;  // --within: pools x intra at most this; 0: no such limit
  bool save = false;
  namespace cl = pw::cli;
  cl::Command command;
  if (const int rc = cl::command_scan(
          "sweep", argc, argv,
          {cl::flag("--save", &save), cl::count_list("--pools", &pools),
           cl::count_list("--intra", &threads), cl::count("--repeat", 1, 100000, &repeat),
           cl::text("--out", &out_dir), cl::count("--within", 1, 1 << 20, &within)},
          usage, &command);
      rc >= 0)
    return rc;
  char** const cmd = command.cmd;
  const cl::Metric& re = command.metric;
  const std::string& so = command.so;
  const bool json = command.json;
  // The budget the preload will see.
  pw::planning::Planned planned;
  std::string err;
  if (!cl::budget_plan(&planned, &err)) {
    fprintf(stderr, "parwidth sweep: error: %s\n", err.c_str());
    return 2;
  }
  const int cores = std::max(1, planned.budget.cores);
  const int sockets = std::max<int>(1, static_cast<int>(planned.budget.sockets.size()));
  const bool filter = pools.empty() || threads.empty();
  // Oversubscribed pairs too: TensorFlow's own default (inter = intra = CPUs) is one, and
  // it wins on some graphs (docs/paper-results.md).
  const int most = 2 * cores;
  if (pools.empty())
    for (int k = 1; k <= cores; ++k) pools.push_back(k);
  if (threads.empty())
    for (int k = 1; k <= most; ++k) threads.push_back(k);

  std::vector<Config> configs;
  for (int p : pools)
    for (int t : threads)
      if ((!filter || p * t <= most) && (within == 0 || p * t <= within))
        configs.push_back({"grid", p, t, {}});
  if (configs.empty()) {
    fprintf(stderr, "parwidth sweep: error: no configuration fits %d cores\n", cores);
    return 2;
  }
  const size_t n_grid = configs.size();
  configs.push_back({"plan", 0, 0, {}});
  configs.push_back({"intel", sockets, cores, {}});
  configs.push_back({"tf", logical_cpus(), logical_cpus(), {}});
  configs.push_back({"default", 0, 0, {}});

  if (mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "parwidth sweep: error: cannot create %s: %s\n", out_dir.c_str(),
            strerror(errno));
    return 2;
  }
  const std::string log_path = out_dir + "/runs.log";
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const std::string plan_report = out_dir + "/plan-report.json";
  const bool tty = isatty(2);
  std::string fingerprint;  // the graph's, from the plan run's report (--save)
  const size_t total = configs.size() * static_cast<size_t>(repeat);
  size_t done = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeat; ++r) {
    for (size_t at : round_order(configs.size(), r)) {
      Config& c = configs[at];
      std::string out, why;
      double secs = 0;
      if (log_fd >= 0) dprintf(log_fd, "=== %s, repeat %d\n", label(c).c_str(), r + 1);
      pw::cli::RunSpec spec;
      spec.preload = c.name != "default";
      if (c.name == "plan") {
        spec.report = plan_report;
      } else {
        spec.pools = c.pools;
        spec.threads = c.threads;
      }
      if (!pw::cli::run_once(cmd, spec, so, log_fd, &out, &secs, &why)) {
        if (tty) fputs("\n", stderr);
        fprintf(stderr, "parwidth sweep: error: run failed: %s, repeat %d: %s (output in %s)\n",
                label(c).c_str(), r + 1, why.c_str(), log_path.c_str());
        return 1;
      }
      double value = secs;
      if (!re.value(out, secs, &value)) {
        if (tty) fputs("\n", stderr);
        fprintf(stderr,
                "parwidth sweep: error: run failed: %s, repeat %d: no match for --metric '%s' in "
                "its output (see %s)\n",
                label(c).c_str(), r + 1, re.pattern().c_str(), log_path.c_str());
        return 1;
      }
      c.runs.push_back(value);
      if (c.name == "plan" && c.pools == 0) {  // what the preload planned, from its report
        pw::cli::ReportPlan rp;
        std::string e;
        if (pw::cli::report_read(plan_report, &rp, &e)) {
          c.pools = rp.pools;
          c.threads = rp.threads;
          fingerprint = rp.fingerprint;
        }
      }
      ++done;
      const double el =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double eta = el / static_cast<double>(done) * static_cast<double>(total - done);
      if (tty) {
        const int width = 30, fill = static_cast<int>(width * done / total);
        fprintf(stderr, "\r[%s%s] %zu/%zu  %-30s  ETA %s   ",
                std::string(static_cast<size_t>(fill), '#').c_str(),
                std::string(static_cast<size_t>(width - fill), '.').c_str(), done, total,
                label(c).c_str(), fmt_time(eta).c_str());
      } else {
        fprintf(stderr, "parwidth sweep: %zu/%zu %s run %d: %.6g (ETA %s)\n", done, total,
                label(c).c_str(), r + 1, value, fmt_time(eta).c_str());
      }
    }
  }
  if (tty) fputs("\n", stderr);
  if (log_fd >= 0) close(log_fd);

  const std::string unit = re.wall() ? "s" : "metric";
  const Config* best = &configs[0];
  for (size_t i = 0; i < n_grid; ++i)
    if (summarize(configs[i].runs).median < summarize(best->runs).median) best = &configs[i];
  const Config* best_in = nullptr;  // the best that does not oversubscribe the cores
  for (size_t i = 0; i < n_grid; ++i)
    if (configs[i].pools * configs[i].threads <= cores &&
        (!best_in || summarize(configs[i].runs).median < summarize(best_in->runs).median))
      best_in = &configs[i];
  const Config& plan = configs[n_grid];
  const Config& intel = configs[n_grid + 1];
  const Config& tf = configs[n_grid + 2];
  const Config& def = configs[n_grid + 3];
  const double best_m = summarize(best->runs).median;
  auto ratio = [&](const Config& c) {
    return best_m > 0 ? summarize(c.runs).median / best_m : 0.0;
  };

  // CSV: one row per configuration.
  const std::string csv_path = out_dir + "/sweep.csv";
  {
    std::ofstream csv(csv_path);
    csv << "configuration,pools,intra,oversubscribed,min,median,max,runs\n";
    for (const Config& c : configs) {
      const Summary s = summarize(c.runs);
      csv << c.name << "," << c.pools << "," << c.threads << ","
          << (c.pools * c.threads > cores ? 1 : 0) << "," << s.min << "," << s.median << ","
          << s.max << ",";
      for (size_t k = 0; k < c.runs.size(); ++k) csv << (k ? ";" : "") << c.runs[k];
      csv << "\n";
    }
  }
  const std::string svg_path = out_dir + "/heatmap.svg";
  {
    std::ofstream svg(svg_path);
    std::string title = "parwidth sweep:";
    for (char** p = cmd; *p; ++p) title += std::string(" ") + *p;
    std::string esc;
    for (char ch : title)
      esc += ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '&' ? "&amp;" : std::string(1, ch);
    svg << heatmap(
        std::vector<Config>(configs.begin(), configs.begin() + static_cast<long>(n_grid)), pools,
        threads, plan, *best, cores, re.wall() ? "seconds (wall)" : "of --metric", esc);
  }

  // --save: the grid's best becomes the measured plan of this graph on this budget; medians
  // within kSaveTie of the lowest are a tie, which the fewest threads win (the model's rule).
  constexpr double kSaveTie = 0.02;
  const Config* kept = best;
  {
    std::vector<pw::gov::Candidate> grid;
    for (size_t i = 0; i < n_grid; ++i)
      grid.push_back({configs[i].pools, configs[i].threads, summarize(configs[i].runs).median});
    const size_t k = pw::gov::candidate_choose(grid, kSaveTie);
    if (k < n_grid) kept = &configs[k];
  }
  std::string saved_path, save_error;
  if (save) {
    const Summary s = summarize(kept->runs);
    pw::gov::MeasuredPlan m;
    m.known = true;
    m.pools = kept->pools;
    m.threads = kept->threads;
    m.seconds = s.median;
    m.min = s.min;
    m.max = s.max;
    m.runs = static_cast<int>(kept->runs.size());
    m.created = static_cast<int64_t>(time(nullptr));
    m.by = "sweep --save";
    m.metric = re.describe();
    if (fingerprint.empty())
      save_error =
          "nothing saved: the plan run's report has no graph fingerprint (CMD's graph is not "
          "known to parwidth: give it with PARWIDTH_MODEL, or use a framework whose sessions "
          "parwidth reads)";
    else if (!pw::cli::measured_save(planned, fingerprint, m, &saved_path, &save_error))
      save_error = "nothing saved: " + save_error;
  }

  if (json) {
    pw::json::Writer w;
    auto conf = [&](const Config& c) {
      const Summary s = summarize(c.runs);
      w.begin_object();
      w.key("configuration").value(c.name);
      w.key("pools").value(c.pools);
      w.key("intra").value(c.threads);
      w.key("oversubscribed").value(c.pools * c.threads > cores);
      w.key("min").value(s.min);
      w.key("median").value(s.median);
      w.key("max").value(s.max);
      w.key("runs").begin_array();
      for (double x : c.runs) w.value(x);
      w.end_array();
      w.end_object();
    };
    w.begin_object();
    w.key("metric").value(re.describe());
    w.key("cores").value(cores);
    w.key("sockets").value(sockets);
    w.key("repeat").value(repeat);
    w.key("plan");
    conf(plan);
    w.key("best");
    conf(*best);
    w.key("default");
    conf(def);
    w.key("intel");
    conf(intel);
    w.key("tf");
    conf(tf);
    if (best_in) {
      w.key("best_within_cores");
      conf(*best_in);
    }
    w.key("plan_over_best").value(ratio(plan));
    w.key("default_over_best").value(ratio(def));
    w.key("intel_over_best").value(ratio(intel));
    w.key("tf_over_best").value(ratio(tf));
    w.key("grid").begin_array();
    for (size_t i = 0; i < n_grid; ++i) conf(configs[i]);
    w.end_array();
    w.key("csv").value(csv_path);
    w.key("heatmap").value(svg_path);
    if (save) {
      w.key("fingerprint").value(fingerprint);
      w.key("stored");
      conf(*kept);
      w.key("saved");
      if (saved_path.empty())
        w.null();
      else
        w.value(saved_path);
    }
    w.end_object();
    printf("%s\n", w.str().c_str());
    if (!save_error.empty()) fprintf(stderr, "parwidth sweep: error: %s\n", save_error.c_str());
    return save_error.empty() ? 0 : 1;
  }
  printf("%-34s %10s %10s %10s\n", "configuration", "min", "median", "max");
  for (const Config& c : configs) {
    const Summary s = summarize(c.runs);
    printf("%-34s %10.4g %10.4g %10.4g\n", label(c).c_str(), s.min, s.median, s.max);
  }
  printf("best: %s, median %.4g\n", label(*best).c_str(), best_m);
  printf("plan median / best median: %.3f (%s)\n", ratio(plan), label(plan).c_str());
  printf("default median / best median: %.3f (ungoverned)\n", ratio(def));
  printf("intel median / best median: %.3f (%s)\n", ratio(intel), label(intel).c_str());
  printf("tf median / best median: %.3f (%s, TensorFlow's default)\n", ratio(tf),
         label(tf).c_str());
  if (best_in && best_in != best)
    printf("best without oversubscription: %s, median %.4g\n", label(*best_in).c_str(),
           summarize(best_in->runs).median);
  printf("wrote %s, %s, %s\n", csv_path.c_str(), svg_path.c_str(), log_path.c_str());
  if (!saved_path.empty())
    printf("stored: %s as the measured plan of graph %s (%s)\n", label(*kept).c_str(),
           fingerprint.c_str(), saved_path.c_str());
  if (!save_error.empty()) fprintf(stderr, "parwidth sweep: error: %s\n", save_error.c_str());
  return save_error.empty() ? 0 : 1;
}
