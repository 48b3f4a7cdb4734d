// core/report: the JSON report written at exit, and the human summary.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/options.h"
#include "core/planning.h"
#include "governor/graph_width.h"
#include "governor/thread_table.h"

namespace pw::report {

// A framework's or runtime's setting that was applied or left alone.
struct FrameworkNote {
  std::string name, setting, value;
  bool applied = false;
  std::string why;
  long long time_ms = 0;  // when it was noted, Unix milliseconds (a re-division's moment)
};

// A thread pool of a library beside the frameworks' (a BLAS library's):
// where it was found, its size before and after, and who set it.
struct PoolNote {
  std::string library;  // "openblas", "mkl", "blis"
  std::string object;   // the file that defines it
  int before = -1;      // -1: unknown
  int after = -1;
  std::string set_by;  // "parwidth", "library default", "user: ..."
  bool applied = false;
  std::string why;
};

struct Input {
  const opt::Options* opt = nullptr;
  std::string program;
  bool active = false;
  std::string fail_reason;
  const planning::Planned* planned = nullptr;  // null when not active
  std::vector<gov::ThreadRecord> threads;
  size_t threads_ended = 0;     // threads that exited, listed or not
  size_t threads_unlisted = 0;  // ended threads beyond those listed
  // Originals looked up per calling object in the loaded objects' symbol tables (hooks/real:
  // each (hook, object) pair once while nothing is unloaded; the rest are cached).
  unsigned long long originals_looked_up = 0;
  int omp_cap = 0;
  std::vector<FrameworkNote> frameworks;
  std::vector<PoolNote> pools;
  std::vector<std::string> warnings;
  std::string monitor_json;  // empty = null
  // The plans in force in order, each with its cause and what was applied for
  // it (runtime/in_force.h), and what is in force at exit with each runtime's
  // own values; empty = null.
  std::string timeline_json;
  std::string in_force_json;
  std::string functions_json;        // TF2 function graphs seen; empty = []
  std::string function_memory_json;  // empty = null
  bool forked_child = false;
};

// The report as one JSON object.
std::string report_text(const Input& in);

// The budget and plan objects (also used by `parwidth plan --json`).
std::string budget_json(const topo::Budget& b);
std::string plan_json(const gov::Plan& p);
// The width statistics' fields (heavy ... span_flops) into an open JSON object.
void width_fields(json::Writer* w, const gov::GraphWidth& g);

// The graph object, or "null" when no graph is known.
std::string graph_json(const planning::GraphSummary& g);

// A graph's statistics (and its subgraphs') as one JSON object: `parwidth width --json`.
// heavy, layers, avg_width, max_level_width, weighted_parallelism, heavy_by_type, costs,
// work_flops, span_flops, work_over_span, bytes, nodes, source, name, subgraphs (and note).
std::string stats_json(const graph::Stats& s);

// Writes PARWIDTH_REPORT (if set) atomically, and the summary on stderr at
// VERBOSE >= 1. "%p" in the path is the pid; a forked child without "%p"
// writes to "<path>.<pid>" so that it never replaces its parent's report.
void exit_write(const Input& in);

// The report path for this process.
std::string report_path(const std::string& pattern, bool forked_child);

}  // namespace pw::report
