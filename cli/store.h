// cli/store: what `parwidth tune` and `parwidth sweep --save` read from a
// governed run's report, and storing the measured best for its graph.
#pragma once

#include <string>
#include <vector>

#include "core/planning.h"
#include "governor/plan.h"

namespace pw::cli {

// The parts of a report (PARWIDTH_REPORT) that tuning needs.
struct ReportPlan {
  std::string fingerprint;  // graph.fingerprint; "" when the graph is unknown
  std::string graph_source;
  int pools = 0, threads = 0;
  std::string source;                           // plan.source
  std::vector<gov::Plan::Predicted> predicted;  // plan.predicted
};
// False only when the report is missing or not JSON.
bool report_read(const std::string& path, ReportPlan* out, std::string* why);

// Stores m as the measured plan of graph `fingerprint` on the planned budget
// (machine and budget ids as the preload computes them), in the user's cache.
bool measured_save(const planning::Planned& p, const std::string& fingerprint,
                   const gov::MeasuredPlan& m, std::string* path, std::string* why);

// This command's version, recorded with each measurement.
const char* version();

}  // namespace pw::cli
