// core/planning: machine -> budget -> (graph) -> plan, for this process or
// for a described machine. Shared by the preload and the `parwidth` command.
#pragma once

#include <string>
#include <vector>

#include "core/options.h"
#include "governor/graph_width.h"
#include "governor/plan.h"
#include "governor/schedule.h"
#include "graph/graph.h"
#include "topology/topology.h"

namespace pw::planning {

// known (GraphWidth's): a graph was read and the rest holds its summary.
struct GraphSummary : gov::GraphWidth {
  std::string source;
  double work_over_span = 1;  // graph/README.md
  // The operators with their FLOPs and bytes, when every heavy operator's
  // FLOPs are known (costs_known); the model plans from it.
  bool costs_known = false;
  gov::CostGraph cost_graph;
  // graph::fingerprint of the graph, the key of its measured plans; "" when
  // the graph came without its operators (a hook that passes statistics only).
  std::string fingerprint;
  // Where a graph from an earlier run came from (a remembered TF2 function
  // graph, runtime/functions); added to the plan's source_detail.
  std::string remembered;
};

struct Planned {
  topo::Machine machine;
  topo::Budget budget;
  GraphSummary graph;
  gov::Plan plan;
  std::string local_from;             // where local rank/size came from
  bool node_registry = false;         // no launcher gave a share: the node registry may divide
  std::vector<std::string> warnings;  // problems that did not stop planning
  bool calibration_found = false;     // a stored calibration was used (source "model")
  std::string boot_dir;               // boot_cache_dir() when this machine was planned, else ""
};

// The plan for a budget from the graph and the options: the sources of
// PARWIDTH_PLAN in order; the measured plan stored for the graph's
// fingerprint, then the machine model (read from the calibration cache when
// the graph has costs). A bad stored plan or calibration adds one warning.
gov::Plan plan_with_cache(const opt::Options& o, const opt::EnvLookup& env,
                          const topo::Machine& machine, const topo::Budget& budget,
                          const GraphSummary& graph, std::vector<std::string>* warnings,
                          bool* calibration_found);

// Reads a model graph, infers its shapes (graph input shapes from input_shapes,
// "name=1x3x224x224,..." as PARWIDTH_INPUT_SHAPES; the model's own when empty) and computes
// its width statistics and costs; false with *err if unreadable. Shape warnings (symbolic
// dims taken as 1, ops without a rule) go to *shape_warnings when non-null.
bool graph_summary(const std::string& path, GraphSummary* out, std::string* err,
                   const std::string& input_shapes = {},
                   std::vector<std::string>* shape_warnings = nullptr);

// The per-boot cache directory: <registry directory>-boot for the first of
// node::candidate_dirs that is (or is made, 0700) a directory of this user's
// with no group or other write bit; "" when there is none. Holds what does not
// change until the next boot: the machine (machine.txt), PAPI's verdict (papi.txt).
std::string boot_cache_dir(const opt::Options& o);

// The summary (statistics and operator costs) of a graph already read.
void summary_from(const graph::Graph& g, const graph::Stats& st, GraphSummary* out);

// The statistics the plan uses, from graph/'s (known).
gov::GraphWidth width_of(const graph::Stats& st);
// g's operators with their FLOPs and bytes (unknown: 0), and which shape inference folded.
gov::CostGraph cost_graph_of(const graph::Graph& g);

// What a framework hook does with the graph a session will run: infers its
// shapes (from the graph's own input shapes, and PARWIDTH_INPUT_SHAPES's text
// in `input_shapes` where it parses; a bad value was warned about with the
// options), computes its statistics and costs, and fills *out. Operators whose
// shapes stay unknown cost one unit (the width rule then plans). Not kOk (with
// *err) only when the statistics cannot be computed.
graph::Status graph_costed(graph::Graph* g, const std::string& input_shapes, GraphSummary* out,
                           std::string* err);
// The same with the input shapes given as they are (a session's own sizes).
graph::Status graph_costed(graph::Graph* g, const graph::InputShapes& given, GraphSummary* out,
                           std::string* err);

// The local rank and size from PARWIDTH_LOCAL_*, else the launcher's variables
// (torchrun, Open MPI, MPICH/Hydra, Slurm). Defaults 0 of 1. A launcher that
// bound each rank to its own CPUs (Open MPI's default binding, srun
// --cpu-bind) leaves 0 of 1 and *from starting with kBoundPrefix: the
// affinity already is the share.
inline constexpr const char kBoundPrefix[] = "bound to its CPUs";
void local_share(const opt::Options& o, const opt::EnvLookup& env, int* rank, int* size,
                 std::string* from);

// Slurm's tasks-per-node list ("2(x3),1") at a node index; false if malformed or out of range.
bool slurm_tasks_on_node(const char* text, int index, int* out);

// Plans for this process (o.topology empty) or for the described machine.
// `machine` may hold an already-loaded machine (fork child) to skip the load.
// Returns false with *err when no trustworthy budget exists: run ungoverned.
bool plan_process(const opt::Options& o, const opt::EnvLookup& env, const topo::Machine* machine,
                  Planned* out, std::string* err);

gov::BudgetView budget_view(const topo::Budget& b);

}  // namespace pw::planning
