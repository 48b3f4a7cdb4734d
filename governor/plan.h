// governor/plan: pools, threads per pool and a core set per pool, from the
// CPU budget, the model graph's width and the user's overrides.
//
// Pure: values in, values out. No error states: every input yields a plan
// (at least one pool of at least one thread); what was clamped is in notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "governor/graph_width.h"

namespace pw::gov {

// One physical core of the budget: its socket and its allowed PUs.
struct CoreSlot {
  int socket = 0;
  std::vector<int> pus;  // ascending; pus[0] is the core's primary PU
};

// The budget as the governor sees it: cores in socket-major order.
struct BudgetView {
  std::vector<CoreSlot> cores;
};

struct PlanOptions {
  int pools = 0;     // PARWIDTH_POOLS; 0 = from the graph
  int threads = 0;   // PARWIDTH_INTRA; 0 = slots / pools
  bool smt = false;  // every PU is a slot, not only each core's first
  // Each pool's core set inside one socket (governor/socket_plan.h): pools
  // divided evenly among the first min(pools, sockets) sockets, a socket's
  // slots among its pools. false: balanced groups over all the slots, as few
  // of them spanning as the sizes allow.
  bool per_socket = false;
};

// A plan measured for one graph fingerprint on one budget (`parwidth tune`,
// `parwidth sweep --save`; governor/plan_store reads and writes its file).
struct MeasuredPlan {
  bool known = false;
  int pools = 1, threads = 1;
  double seconds = 0;       // the measured best (median, in the metric's unit)
  std::string how;          // one line: "parwidth tune, 2026-12-01 03:10 UTC, 12 runs, ..."
  int runs = 0;             // runs of the best configuration
  double min = 0, max = 0;  // its fastest and slowest run
  int64_t created = 0;      // unix seconds
  std::string by;           // "tune" or "sweep --save"
  std::string version;      // parwidth's version that measured it
  std::string metric;       // "wall seconds" or the --metric pattern
};

struct Plan {
  int pools = 1;
  int threads = 1;                          // intra-op / OpenMP threads per pool
  int slots = 1;                            // cores (or PUs with smt) planned over
  std::vector<std::vector<int>> core_sets;  // per pool: the CPUs (PU ids) it may use
  int spanning_pools = 0;                   // pools whose set crosses a socket boundary
  std::vector<std::string> notes;           // how pools and threads were chosen
  // Which source chose pools and threads: "user" (PARWIDTH_POOLS/INTRA),
  // "measured", "model" or "width"; `source_detail` says from what.
  std::string source = "width";
  std::string source_detail;
  struct Predicted {
    int pools = 1, threads = 1;
    double seconds = 0;
    bool spans = false;  // its teams span sockets
  };
  std::vector<Predicted> predicted;  // the model's candidates (source "model" only)
  MeasuredPlan measured;             // what was measured (source "measured" only)
  // Its cores are shared with other governed processes (more of them than
  // cores): each pool may use all of them, and a thread is pinned to its
  // pool's set rather than one core (plan_shared).
  bool shared = false;
};

// pools   = opt.pools, else clamp(W, 1, min(max level width, slots))
// threads = opt.threads, else floor(slots / pools)
// core sets: balanced contiguous groups in socket-major order, arranged so
// that as few pools as possible span two sockets.
Plan plan_for(const BudgetView& budget, const GraphWidth& width, const PlanOptions& opt);

// `p` (planned on the cores' worth this process may keep busy) on `cpus`, a
// region it shares with more processes than it has cores: every pool's set is
// all of `cpus`, and `shared` is set. Pools and threads are p's.
Plan plan_shared(Plan p, const std::vector<int>& cpus);

// `p` on cores shared by time with other servers (governor/node_share): every
// pool's set is the union of p's sets, pools and threads p's, `shared` set.
// Whose burst runs moves from moment to moment; a thread pinned to one core
// would wait behind a neighbour's there while another core is free.
Plan plan_time_shared(Plan p);

}  // namespace pw::gov
