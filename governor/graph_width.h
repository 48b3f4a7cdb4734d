// governor/graph_width: a graph's width statistics as planning uses them (graph::Stats,
// reduced to what the plan and the report need). Shared by a model's summary
// (core/planning) and a remembered TF function graph (function_memory).
#pragma once

#include <string>

namespace pw::gov {

struct GraphWidth {
  long heavy = 0, layers = 0, avg_width = 1, max_level_width = 1;
  double weighted_parallelism = 1;
  std::string costs = "unit";             // "flops" when weighted_parallelism used FLOPs
  double work_flops = 0, span_flops = 0;  // total work and the costliest path (graph/README.md)
};

}  // namespace pw::gov
