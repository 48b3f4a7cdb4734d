// hooks/ort: ONNX Runtime sessions. The session's graph comes from the model
// it loads (graph/ reads ONNX); intra_op_num_threads = the plan's threads per
// pool; with more than one pool, the parallel execution mode with the plan's
// pools as inter-op threads; spinning off while other governed processes
// share the node. Explicit options are kept unless PARWIDTH_OVERRIDE=1.
// Python reaches this through hooks/python.cpp (the wheel's binding links
// ORT's core statically: nothing crosses a library boundary).
#include "hooks/ort.h"

#include <atomic>
#include <string>

#include "core/model_file.h"
#include "core/planning.h"
#include "governor/graph_adoption.h"
#include "governor/pool_rebuild.h"
#include "governor/pools_ort.h"
#include "graph/graph.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/pools.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

const char* const kName = "onnxruntime";

void plan_from_model(const void* model, size_t size, bool is_path) {
  // Asked before the model is read: with PARWIDTH_MODEL set, reading it is wasted.
  const bool model_given = !rt::options().model.empty();
  if (gov::graph_adoption(model_given, -1) == gov::GraphAdoption::kModelGiven) {
    rt::framework_note(kName, "graph (session model)", "", false,
                       gov::graph_adoption_text(gov::GraphAdoption::kModelGiven));
    return;
  }
  // The session's own graph, costed as the engine's and TensorFlow's are, so
  // the plan comes from the model where every heavy operator's shape is known.
  graph::Graph g;
  std::string err;
  graph::Status s =
      is_path ? files::model_load(std::string(static_cast<const char*>(model), size), &g, &err)
              : graph::model_parse(model, size, graph::Format::kOnnx, &g, &err);
  planning::GraphSummary summary;
  if (s == graph::Status::kOk)
    s = planning::graph_costed(&g, rt::options().input_shapes, &summary, &err);
  if (s != graph::Status::kOk) {
    rt::warn_once("ort-graph", "onnxruntime: the session's model could not be read (" +
                                   std::string(status_name(s)) + ": " + err +
                                   "); planning without it");
    return;
  }
  if (const gov::GraphAdoption a = gov::graph_adoption(model_given, summary.heavy);
      a != gov::GraphAdoption::kAdopt) {
    rt::framework_note(kName, "graph (session model)", "no heavy operators", false,
                       gov::graph_adoption_text(a));
    return;
  }
  summary.source = "onnxruntime session model";
  rt::graph_adopt(summary);
  const gov::Plan& p = rt::plan();
  rt::framework_note(kName, "graph (session model)",
                     "H=" + std::to_string(summary.heavy) + " L=" + std::to_string(summary.layers) +
                         " W=" + std::to_string(summary.avg_width),
                     true,
                     "plan from the session's graph: " + std::to_string(p.pools) + " pools x " +
                         std::to_string(p.threads) + " threads (" + p.source + ")");
}

// One option's decision for the report: `shown` is the program's value as
// the report shows it, `ours` the plan's where it is not the decided count.
void option_note(const gov::OrtOptionDecision& o, const std::string& setting,
                 const std::string& shown, const std::string& reason,
                 const std::string& ours = "") {
  const gov::SettingDecision& d = o.setting;
  if (!o.asked || d.verdict == gov::SettingVerdict::kNoPlan) return;
  rt::framework_note(kName, setting,
                     d.changes() ? (ours.empty() ? std::to_string(d.value) : ours) : shown,
                     d.changes(),
                     std::string(gov::setting_verdict_text(d.verdict)) +
                         (o.user_set ? " (the program set " + shown + ")" : "") + "; " + reason);
}

// The session options that the plan in force gives a session with the
// program's options `u`; with `notes`, each decision is noted for the report.
OrtPlanned options_for_plan(const OrtUserOptions& u, const char* api, bool notes) {
  // The session's pools are made once: while fewer governed processes than
  // expected are on the node, for the share this one will have then.
  std::string expected;
  const gov::Plan p = rt::fixed_pools_plan(&expected);
  const gov::OrtSessionDecision d = gov::ort_session_decide(pool_context(p), u, rt::node_shared());
  if (!notes) return d.set;
  const std::string ahead = expected.empty() ? std::string() : "; " + expected;
  const std::string via = std::string(" (") + api + ")";
  option_note(d.intra, "session intra_op_num_threads" + via, std::to_string(u.intra),
              "plan threads per pool " + std::to_string(p.threads) + ahead);
  option_note(d.mode, "session execution_mode" + via,
              u.parallel ? "ORT_PARALLEL" : "ORT_SEQUENTIAL",
              "the plan has " + std::to_string(p.pools) + " pools", "ORT_PARALLEL");
  option_note(d.inter, "session inter_op_num_threads" + via, std::to_string(u.inter),
              "plan pools " + std::to_string(p.pools));
  option_note(d.spin, "session allow_spinning (intra_op, inter_op)" + via, std::to_string(u.spin),
              "other governed processes share this node: idle workers must not spin", "0");
  return d.set;
}

}  // namespace

OrtPlanned ort_session_plan(const void* model, size_t size, bool is_path, const OrtUserOptions& u,
                            const char* api) {
  OrtPlanned out;
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return out;
  const bool ok = fail_open("ort-session", [&] {
    // The session's pools keep the size they are created with: where the node
    // is shared, this process joins first, so the plan below is its share's.
    rt::fixed_pools_prepare();
    if (model && size > 0) plan_from_model(model, size, is_path);
    out = options_for_plan(u, api, true);
  });
  return ok ? out : OrtPlanned{};
}

OrtPlanned ort_session_replan(const OrtUserOptions& u, const OrtPlanned& made, gov::RebuildInput in,
                              gov::RebuildVerdict* verdict) {
  *verdict = gov::RebuildVerdict::kSame;
  OrtPlanned out = made;
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return out;
  const bool ok = fail_open("ort-replan", [&] {
    const OrtPlanned want = options_for_plan(u, "Python", false);
    in.now = gov::ort_session_pools(u, made);
    in.want = gov::ort_session_pools(u, want);
    const gov::RebuildDecision d = gov::pool_rebuild_decide(in);
    *verdict = d.verdict;
    if (d.verdict != gov::RebuildVerdict::kRebuild && d.verdict != gov::RebuildVerdict::kKept)
      return;
    static std::atomic<int> noted{0};
    if (noted.fetch_add(1) < 32) {
      const auto shape = [](const gov::SessionPools& s) {
        return "intra " + std::to_string(s.intra) + ", inter " + std::to_string(s.inter) +
               ", spin " + std::to_string(s.spin);
      };
      rt::framework_note(
          kName, "session rebuilt for the plan in force (Python)",
          shape(in.now) + " -> " + shape(in.want), d.verdict == gov::RebuildVerdict::kRebuild,
          std::string(d.why) + "; runs in flight: " + std::to_string(in.runs_in_flight));
    }
    if (d.verdict == gov::RebuildVerdict::kRebuild) {
      out = want;
      rt::plan_applied(rt::plan_generation(), "ONNX Runtime session made again (Python): intra " +
                                                  std::to_string(in.want.intra) + ", inter " +
                                                  std::to_string(in.want.inter) + ", spin " +
                                                  std::to_string(in.want.spin));
    }
  });
  if (!ok) {
    *verdict = gov::RebuildVerdict::kSame;
    return made;
  }
  return out;
}

void ort_session_used(const std::string& what) {
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return;
  fail_open("ort-used", [&] {
    rt::framework_note(kName, "session thread pools used", what, true,
                       "ORT's own session options after creation, and the threads it started");
  });
}

}  // namespace pw::hooks
