// governor/plan_source: measured, then model, then width.
#include "governor/plan_source.h"

#include <cstdio>

#include "governor/socket_plan.h"

namespace pw::gov {

Plan plan_choose(const BudgetView& budget, const PlanInputs& in, const PlanOptions& opt) {
  // The user's explicit counts win; the width rule fills what is not given.
  const SocketShape shape = socket_shape(budget, opt.smt);
  // Counts from elsewhere are placed per socket where they fit one (the
  // model's per-socket candidates' layout), else over all the slots.
  auto placed = [&](PlanOptions o) {
    const Plan first = plan_for(budget, in.width, o);
    o.per_socket = per_socket_fits(shape, first.pools, first.threads);
    return o.per_socket ? plan_for(budget, in.width, o) : first;
  };
  if (opt.pools > 0 || opt.threads > 0) {
    Plan p = placed(opt);
    p.source = "user";
    p.source_detail = "PARWIDTH_POOLS / PARWIDTH_INTRA";
    return p;
  }
  const Plan rule = placed(opt);
  const int slots = rule.slots;
  std::string why_not;
  const bool try_measured = in.mode == PlanMode::kAuto || in.mode == PlanMode::kMeasured;
  const bool try_model = in.mode == PlanMode::kAuto || in.mode == PlanMode::kModel;

  if (try_measured) {
    if (in.measured.known && in.measured.pools >= 1 && in.measured.threads >= 1) {
      PlanOptions o = opt;
      o.pools = in.measured.pools;
      o.threads = in.measured.threads;
      Plan p = placed(o);
      p.notes.clear();
      p.source = "measured";
      p.source_detail = in.measured.how;
      p.measured = in.measured;
      char buf[160];
      // The median's unit is the metric's (wall seconds or --metric): `how` says which.
      snprintf(buf, sizeof buf, "pools = %d, threads = %d: measured best (%s)", in.measured.pools,
               in.measured.threads, in.measured.how.c_str());
      p.notes.push_back(buf);
      return p;
    }
    why_not += "no measured plan stored for this graph and budget; ";
  }
  if (try_model) {
    if (!in.costs || in.costs->ops.empty()) {
      why_not += "operator costs unknown; ";
    } else if (!in.model) {
      why_not += "no machine model; ";
    } else {
      // Several sockets, or SMT siblings as slots: governor/socket_plan. One
      // socket without siblings: the candidates as they always were.
      SocketChoice c;
      MachineModel smt_model;
      const MachineModel* model = in.model;
      if (shape.sockets > 1 || shape.pus_per_core > 1) {
        smt_model = model_smt(*in.model, shape.pus_per_core);
        c = socket_choose(*in.costs, shape, slots, smt_model);
        model = &smt_model;
      } else {
        const ModelChoice mc = model_choose(*in.costs, slots, slots, *in.model);
        c.candidates = mc.candidates;
        c.chosen = mc.chosen;
      }
      if (c.chosen >= 0) {
        const Candidate& best = c.candidates[static_cast<size_t>(c.chosen)];
        PlanOptions o = opt;
        o.pools = best.pools;
        o.threads = best.threads;
        o.per_socket = shape.sockets > 1 && !best.spans;
        Plan p = plan_for(budget, in.width, o);
        p.notes.clear();
        p.source = "model";
        p.source_detail = model->detail;
        for (const Candidate& x : c.candidates)
          p.predicted.push_back({x.pools, x.threads, x.seconds, x.spans});
        char buf[200];
        snprintf(buf, sizeof buf,
                 "pools = %d, threads = %d: fastest predicted schedule, %.6g s, of %zu "
                 "candidates (%s)",
                 best.pools, best.threads, best.seconds, c.candidates.size(),
                 model->detail.c_str());
        p.notes.push_back(buf);
        if (!c.why.empty()) p.notes.push_back(c.why);
        return p;
      }
      why_not += "the graph has no schedule; ";
    }
  }
  Plan p = rule;
  p.source = "width";
  if (!why_not.empty() && in.mode != PlanMode::kWidth) {
    why_not.resize(why_not.size() - 2);
    p.source_detail = why_not;
    p.notes.insert(p.notes.begin(), "width rule: " + why_not);
  }
  return p;
}

}  // namespace pw::gov
