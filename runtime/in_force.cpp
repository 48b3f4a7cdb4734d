// runtime/in_force: the one owner of the plan in force (see in_force.h).
#include "runtime/in_force.h"

#include <iterator>
#include <utility>

namespace pw::rt {

namespace {
// Plans computed without the lock before one is computed holding it: a process
// sees a handful of changes a second at most, so a third collision means a storm
// (a neighbour leaving and joining every sample) that the lock then serializes.
constexpr int kOptimisticTries = 3;
}  // namespace

std::shared_ptr<const InForce> PlanOwner::current() const {
  std::lock_guard<std::mutex> lock(snap_mu_);
  return current_;
}

PlanOwner::Merge PlanOwner::merge(const Change& c, const InForce* base, InForce* next) {
  using Kind = Change::Kind;
  if (c.kind == Kind::kActivation) {
    *next = InForce();
    next->budget = c.budget;
    next->graph = c.graph;
    next->omp_cap = c.omp_cap;  // > 0: capped; the plan's threads per pool once planned
    if (!c.planned) return Merge::kReplan;
    next->plan = c.plan;
    next->calibration_found = c.calibration_found;
    return Merge::kPlanned;
  }
  if (!base) return Merge::kSame;  // nothing is in force before activation
  *next = *base;
  switch (c.kind) {
    case Kind::kGraph:
      // The same model again (a server making a session per request, a second
      // session of one file): the plan in force was made from it already.
      if (base->graph.known && c.graph.known && !c.graph.fingerprint.empty() &&
          c.graph.fingerprint == base->graph.fingerprint && c.graph.source == base->graph.source)
        return Merge::kSame;
      next->graph = c.graph;
      return Merge::kReplan;
    case Kind::kShare:
      if (c.budget.cpus == base->budget.cpus && c.shared_worth == base->shared_worth &&
          c.team_worth == base->team_worth && c.budget.local_size == base->budget.local_size)
        return Merge::kSame;
      next->budget = c.budget;
      next->shared_worth = c.shared_worth;
      next->team_worth = c.team_worth;
      return Merge::kReplan;
    case Kind::kCap:
      // Only a cap that is ours moves (0: the user's OMP_NUM_THREADS stands).
      if (base->omp_cap <= 0 || c.omp_cap <= 0 || c.omp_cap == base->omp_cap) return Merge::kSame;
      next->omp_cap = c.omp_cap;
      return Merge::kKeepPlan;
    case Kind::kChildren:
      if (c.children == base->children) return Merge::kSame;
      next->children = c.children;
      return Merge::kKeepPlan;
    case Kind::kActivation:
      break;
  }
  return Merge::kSame;
}

std::shared_ptr<const InForce> PlanOwner::change(const Change& c, const Planner& planner,
                                                 const Applier& apply) {
  for (int attempt = 0;; ++attempt) {
    std::unique_lock<std::mutex> lock(change_mu_, std::defer_lock);
    if (attempt >= kOptimisticTries) lock.lock();
    std::shared_ptr<const InForce> base = current();  // not const: returned by move
    auto next = std::make_shared<InForce>();
    const Merge m = merge(c, base.get(), next.get());
    if (m == Merge::kSame) return base;
    if (m == Merge::kReplan) {
      bool found = false;
      next->plan = planner(*next, &found);
      next->calibration_found = found;
    }
    // A new plan restarts a cap that is ours at its threads per pool (on cores
    // shared by time, at most the team's worth).
    if ((m == Merge::kReplan || m == Merge::kPlanned) && next->omp_cap > 0) {
      next->omp_cap = next->plan.threads > 0 ? next->plan.threads : 1;
      if (next->team_worth > 0 && next->omp_cap > next->team_worth)
        next->omp_cap = next->team_worth;
    }
    if (!lock.owns_lock()) {
      lock.lock();
      // Another change landed while this one was computed: its inputs are in force now,
      // and this plan was made without them. Start again on top of it.
      if (c.kind != Change::Kind::kActivation && current() != base) {
        ++recomputed_;
        continue;
      }
    }
    next->generation = base && c.kind != Change::Kind::kActivation ? base->generation + 1 : 1;
    ++counts_[static_cast<int>(c.kind)];
    next->t_ns = clock_ ? clock_() : 0;
    next->cause = c.cause;
    std::shared_ptr<const InForce> now = std::move(next);
    {
      std::lock_guard<std::mutex> snap(snap_mu_);
      current_ = now;
    }
    TimelineEntry e;
    e.generation = now->generation;
    e.t_ns = now->t_ns;
    e.cause = now->cause;
    e.pools = now->plan.pools;
    e.threads = now->plan.threads;
    e.omp_cap = now->omp_cap;
    e.cpus = now->budget.cpus;
    if (apply) apply(c.kind == Change::Kind::kActivation ? nullptr : base.get(), *now, &e.applied);
    timeline_add(std::move(e));
    return now;
  }
}

void PlanOwner::timeline_add(TimelineEntry e) {
  std::lock_guard<std::mutex> lock(timeline_mu_);
  if (e.generation == 1) {  // activation (again, in a forked child): a timeline of its own
    timeline_.clear();
    timeline_dropped_ = 0;
  }
  if (timeline_.size() >= kTimelineKept) {
    timeline_.erase(timeline_.begin() + static_cast<long>(kTimelineHead));
    ++timeline_dropped_;
  }
  timeline_.push_back(std::move(e));
}

void PlanOwner::applied_note(unsigned generation, const std::string& what) {
  std::lock_guard<std::mutex> lock(timeline_mu_);
  for (auto it = timeline_.rbegin(); it != timeline_.rend(); ++it) {
    if (it->generation != generation) continue;
    if (it->applied.size() < 32) it->applied.push_back(what);
    return;
  }
}

std::vector<TimelineEntry> PlanOwner::timeline(size_t* dropped) const {
  std::lock_guard<std::mutex> lock(timeline_mu_);
  if (dropped) *dropped = timeline_dropped_;
  return timeline_;
}

std::vector<unsigned> PlanOwner::counts() const {
  std::lock_guard<std::mutex> lock(change_mu_);
  return std::vector<unsigned>(std::begin(counts_), std::end(counts_));
}

unsigned PlanOwner::recomputed() const {
  std::lock_guard<std::mutex> lock(change_mu_);
  return recomputed_;
}

}  // namespace pw::rt
