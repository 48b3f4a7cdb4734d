// governor/plan_source: which source decides the plan (docs/design.md, "The plan"):
// a measured plan stored for this graph and budget, the model's predicted
// fastest candidate, or the width rule; the user's PARWIDTH_POOLS/INTRA above all.
//
// Pure: the caller reads the stored plan and the calibration and passes them in.
#pragma once

#include <string>

#include "governor/plan.h"
#include "governor/schedule.h"

namespace pw::gov {

// PARWIDTH_PLAN; its words are the options table's (core/options.cpp).
enum class PlanMode { kAuto, kMeasured, kModel, kWidth };

// MeasuredPlan (a plan measured for this graph fingerprint on this budget) is
// in governor/plan.h: the chosen Plan carries it for the report.

struct PlanInputs {
  GraphWidth width;
  const CostGraph* costs = nullptr;     // null or empty: costs unknown
  const MachineModel* model = nullptr;  // null: the model is not available
  MeasuredPlan measured;
  PlanMode mode = PlanMode::kAuto;
};

// auto: measured, then model, then width. measured / model: that source, else
// the width rule (with a note saying why). width: the paper's rule only.
// Each source's pools and threads go through plan_for for the core sets.
Plan plan_choose(const BudgetView& budget, const PlanInputs& in, const PlanOptions& opt);

}  // namespace pw::gov
