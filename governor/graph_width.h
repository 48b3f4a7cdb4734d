// governor/graph_width: a graph's width statistics as the plan and the report use
// them (graph::Stats, reduced). Shared by a model's summary (core/planning), the
// plan (plan_for, plan_choose) and a remembered TF function graph (function_memory).
#pragma once

#include <string>

namespace pw::gov {

struct GraphWidth {
  bool known = false;  // false: no graph was read; the plan does not use the rest
  long heavy = 0, layers = 0, avg_width = 1, max_level_width = 1;
  double weighted_parallelism = 1;
  std::string costs = "unit";             // "flops" when weighted_parallelism used FLOPs
  double work_flops = 0, span_flops = 0;  // total work and the costliest path (graph/README.md)
};

}  // namespace pw::gov
