// governor/schedule: the predicted time of a graph's schedule for each
// candidate (pools, threads), and the choice among the candidates.
//
// Pure: values in, values out. A graph with a cycle, a bad predecessor index
// or no operators has no prediction (simulate returns a negative time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "governor/machine_model.h"

namespace pw::gov {

// One operator: its FLOPs (0 for a light operator), the bytes it moves
// (0 when unknown) and the operators whose outputs it reads. A folded
// operator (a constant, or shape arithmetic on constants) is computed once
// when the framework loads the graph, not at every run: it costs nothing.
struct OpCost {
  double flops = 0;
  double bytes = 0;
  std::vector<uint32_t> preds;
  bool folded = false;
};

struct CostGraph {
  std::vector<OpCost> ops;
};

// List scheduling over `pools` inter-op pools, each running one operator at a
// time on a team of `threads` threads. When a pool is free it takes the ready
// operator that became ready first (ties, and the graph's inputs, in index
// order): first come, first served, as the example engine's executor queues
// them. TensorFlow's and ONNX Runtime's executors are not strictly FIFO (the
// thread that finishes an operator may run one successor itself, and their
// pools' queues are per thread), but none orders ready operators by the
// critical path either, and a plan predicted as if they did overrates pools
// on graphs with one long branch (towers 12,6,6: 15 operator times instead
// of 12 on two pools, as the engine measured). An operator alone takes op_seconds()
// (with the team wake-up where teams_sleep() says this plan's teams sleep);
// operators running together share the cores: while the running teams ask
// for D > cores threads, a team of d gets cores x d / D cores, so it runs at
// min(1, that / min(d, cores)) of its speed alone; and, since D threads on
// fewer cores get preempted inside each other's barriers, each operator is
// slowed further by what one team of D threads pays over a team of `cores`
// threads on that operator (op_seconds at D over op_seconds at cores, from
// the machine model: measured by the calibration). Each operator's dispatch
// overhead (m.op_overhead_s) is the executor's bookkeeping under its one lock:
// operators in it share it, one at a time. A pool that has just finished
// takes the next ready operator itself; an idle pool sleeps and pays
// m.wake_s before it starts one, and a pool that makes r operators ready
// while s other pools sleep pays m.notify_s x min(r, s) for signalling them,
// before its next operator (executors signal a sleeper even for work they
// then run themselves). Returns the makespan in
// seconds, or -1 for a graph without a schedule (empty, cyclic, bad index).
double simulate(const CostGraph& g, int pools, int threads, const MachineModel& m);

struct Candidate {
  int pools = 1;
  int threads = 1;
  double seconds = 0;  // predicted
  // Whether its pools' teams span sockets (governor/socket_plan.h); false
  // where the budget has one socket.
  bool spans = false;
};

// Candidates within a relative `tie` of the fastest count as equally fast;
// among those the fewest threads (pools x threads) win, then the fewest pools.
inline constexpr double kTieFraction = 0.01;
size_t candidate_choose(const std::vector<Candidate>& c, double tie = kTieFraction);

// Every (pools, threads) with pools x threads <= 2 x cores and pools at most
// max_pools (the plan's core sets give each pool one core at least) and the
// number of operators, each with its simulated time; empty when the graph has
// no schedule.
std::vector<Candidate> candidates_predict(const CostGraph& g, int cores, int max_pools,
                                          const MachineModel& m);

// The model's choice for a graph: the candidates and the index of the chosen
// one (chosen < 0 when there is no prediction).
struct ModelChoice {
  std::vector<Candidate> candidates;
  int chosen = -1;
};
ModelChoice model_choose(const CostGraph& g, int cores, int max_pools, const MachineModel& m);

}  // namespace pw::gov
