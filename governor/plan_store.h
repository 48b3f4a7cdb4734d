// governor/plan_store: the text of one stored measured plan, one file per
// (graph fingerprint, budget) in the user's cache (`parwidth tune`,
// `parwidth sweep --save`; listed by `parwidth plans`).
//
// Pure: formatting and validation only; core/cache reads and writes the
// file. Parsing never throws and never trusts its input: a bad file is a
// status and a reason, and the caller falls back to the next plan source.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "governor/plan.h"

namespace pw::gov {

struct StoredPlan {
  std::string machine;  // core/cache's machine id, compared verbatim
  std::string budget;   // core/cache's budget id
  std::string graph;    // the graph's fingerprint (graph::fingerprint)
  MeasuredPlan plan;    // known = true on a parsed file; `how` is derived
};

inline constexpr size_t kPlanFileMaxBytes = size_t{16} * 1024;

std::string plan_file_format(const StoredPlan& s);

// Parses `text` and checks it against this machine, budget and graph; an empty
// expected string skips that check (`parwidth plans` lists every file). A file
// dated more than a day after `now` is corrupt. On kOk fills *out, with
// out->plan.how describing the measurement in one line.
Status plan_file_parse(const std::string& text, const std::string& machine,
                       const std::string& budget, const std::string& graph, int64_t now,
                       StoredPlan* out, std::string* why);

// "parwidth tune, 2026-12-01 03:10 UTC, 8 runs, median 0.0123 s (spread 4%)".
std::string measured_describe(const MeasuredPlan& m);

// "2026-12-01 03:10 UTC" for unix seconds.
std::string utc_text(int64_t t);

}  // namespace pw::gov
