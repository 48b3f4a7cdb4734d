// governor/simulate: the predicted makespan of a task graph run as `pools` inter-op pools of
// `intra` threads each, by list scheduling (groundwork for plans predicted from costs).
//
// Pure: values in, values out. The caller turns a model graph into tasks (graph/ gives each
// operator's FLOPs and its predecessors); nothing here knows about graph/.
#pragma once

#include <cstdint>
#include <vector>

namespace pw::gov {

struct SimTask {
  double flops = 0;             // the operator's work; <= 0 costs only the overhead
  std::vector<uint32_t> preds;  // tasks that must finish first
};

// How long one operator takes on a team of `intra` threads: Amdahl's law over a
// single-thread rate, plus a fixed dispatch cost.
//   time = overhead_s + flops / flops_per_s * (serial + (1 - serial) / intra)
struct TimeModel {
  double flops_per_s = 1e10;  // one thread, on a large operator
  double serial = 0;          // fraction of an operator that does not speed up, 0..1
  double overhead_s = 0;      // per operator, whatever the team size
};

double op_time(double flops, int intra, const TimeModel& m);

struct SimResult {
  double makespan_s = 0;  // the last task's finish time
  double work_s = 0;      // sum of the tasks' times (at this intra)
  double span_s = 0;      // the costliest path (at this intra): no schedule beats it
};

// List scheduling: whenever a pool is free, it starts the ready task with the longest
// remaining path (bottom level), ties to the lower index. pools and intra are clamped to
// >= 1. False (and *out untouched) when a pred index is out of range or the graph has a
// cycle. No oversubscription model: pools x intra above the cores is not penalised yet.
bool simulate(const std::vector<SimTask>& tasks, int pools, int intra, const TimeModel& m,
              SimResult* out);

}  // namespace pw::gov
