// runtime/in_force: the plan in force, the one place that changes it, and its timeline.
//
// Every change of what is in force (activation, a framework's graph, a node
// re-division, the monitor's OpenMP cap, child processes that began or ceased
// to run) goes through PlanOwner::change: the changes are serialized, each
// gets the next generation, and a plan is stored
// only if it was computed on the inputs in force when it is stored — a plan
// computed while another change landed is computed again on top of that one
// (no lost update). Readers take a snapshot (current()) that never changes
// under them. The thread table's layout and the OpenMP cap's atomics that the
// hot paths read are derived from the snapshot by the applier, inside the
// same serialized step, so they follow the same order of generations.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/planning.h"
#include "governor/plan.h"
#include "topology/topology.h"

namespace pw::rt {

// Everything in force at one generation. Immutable once published.
struct InForce {
  unsigned generation = 0;  // 1 at activation, +1 per change
  uint64_t t_ns = 0;        // when it came into force (the owner's clock)
  std::string cause;        // why: "activation", "graph ...", "node ...", "monitor ..."
  topo::Budget budget;      // the CPUs in force (this process's share when the node is divided)
  // On cores shared with more members than cores: the cores' worth the plan is made for
  // (gov::plan_shared); 0: the budget's cores.
  int shared_worth = 0;
  // Cores shared by time with other servers (gov::NodeShare::team_worth): the
  // OpenMP team cap's ceiling; 0: the plan's threads per pool.
  int team_worth = 0;
  planning::GraphSummary graph;
  bool calibration_found = false;
  gov::Plan plan;
  int omp_cap = 0;  // the OpenMP team cap; 0: OpenMP teams are not capped (the user's count)
  // Child processes run on the process's cores (gov::pin_in_force: pool threads
  // pinned one per core are pinned to their pool's cores meanwhile).
  bool children = false;
};

// One change, with only the inputs of its kind.
struct Change {
  enum class Kind {
    kActivation,  // budget, graph, and omp_cap > 0 if OpenMP teams are capped
    kGraph,       // graph
    kShare,       // budget, shared_worth and team_worth (a node share, or the whole budget again)
    kCap,         // omp_cap (the monitor lowered or raised it)
    kChildren,    // children (child processes came, or the last one went)
  };
  Kind kind = Kind::kActivation;
  std::string cause;
  topo::Budget budget;
  int shared_worth = 0;
  int team_worth = 0;
  planning::GraphSummary graph;
  int omp_cap = 0;
  bool children = false;
  // kActivation: the plan already made on exactly these inputs (planning the
  // process at activation makes it), so the planner is not asked.
  bool planned = false;
  gov::Plan plan;
  bool calibration_found = false;
};

// One entry of the report's timeline: a plan in force and what was applied for it.
struct TimelineEntry {
  unsigned generation = 0;
  uint64_t t_ns = 0;
  std::string cause;
  int pools = 0, threads = 0, omp_cap = 0;
  std::vector<int> cpus;  // the budget's CPUs
  std::vector<std::string> applied;
};

class PlanOwner {
 public:
  // The plan for next's budget, shared_worth and graph.
  using Planner = std::function<gov::Plan(const InForce& next, bool* calibration_found)>;
  // Puts `now` in force (the thread table, the cap's atomics, pins, pools that follow).
  // Called with the change serialized, after `now` is published; before is null at the
  // first generation. Appends to *applied what it did, for the timeline.
  using Applier = std::function<void(const InForce* before, const InForce& now,
                                     std::vector<std::string>* applied)>;
  using Clock = uint64_t (*)();

  explicit PlanOwner(Clock clock = nullptr) : clock_(clock) {}
  PlanOwner(const PlanOwner&) = delete;
  PlanOwner& operator=(const PlanOwner&) = delete;

  // The snapshot in force; null before activation.
  std::shared_ptr<const InForce> current() const;
  // Applies the change. Returns what is in force afterwards (the same snapshot when the
  // change changes nothing: a share equal to the one in force, a cap already in force,
  // anything but an activation before one). planner and apply may take their time and
  // may call current(); a change made from inside planner (another thread's, or the
  // same thread's) is not lost: this one is computed again on top of it.
  std::shared_ptr<const InForce> change(const Change& c, const Planner& planner,
                                        const Applier& apply);
  // Something applied later for a generation (an ONNX Runtime session rebuilt for it).
  void applied_note(unsigned generation, const std::string& what);
  // The timeline: the first kTimelineHead entries and the latest ones up to kTimelineKept
  // in all; *dropped (if non-null) says how many between them are not kept.
  std::vector<TimelineEntry> timeline(size_t* dropped = nullptr) const;
  // How many plans were computed again because another change landed during their compute.
  unsigned recomputed() const;
  // How many changes of each kind came into force (Change::Kind's order), the
  // timeline's dropped entries included.
  std::vector<unsigned> counts() const;

  static constexpr size_t kTimelineHead = 16;
  static constexpr size_t kTimelineKept = 64;

 private:
  enum class Merge { kSame, kKeepPlan, kReplan, kPlanned };
  static Merge merge(const Change& c, const InForce* base, InForce* next);
  void timeline_add(TimelineEntry e);

  Clock clock_;
  mutable std::mutex change_mu_;  // one change at a time: store and apply
  mutable std::mutex snap_mu_;    // the pointer below, held only to copy or swap it
  std::shared_ptr<const InForce> current_;
  mutable std::mutex timeline_mu_;
  std::vector<TimelineEntry> timeline_;
  size_t timeline_dropped_ = 0;
  unsigned recomputed_ = 0;  // under change_mu_
  unsigned counts_[5] = {};  // per Change::Kind, under change_mu_
};

}  // namespace pw::rt
