// hooks/engine: governs examples/engine (libpwengine.so) through its session API.
//
// This is the template for governing a framework. Every framework hook has the same
// four steps, done once per session, before the framework sizes its thread pools:
//   1. Interpose the call that creates a session and still carries its options
//      (TF_NewSession, OrtCreateSession, ... here pwe_session_new). Pass through when
//      parwidth is not selected, and always call the original with the caller's own
//      arguments and return its result (fail open: no exception leaves this file).
//   2. Read the graph the session will run: the bytes handed to the call, or through the
//      framework's own API (TF_GraphToGraphDef; here pwe_session_graph after creation).
//      graph/ parses it, infers its shapes (per-operator FLOPs and bytes) and computes
//      H, L, W.
//   3. rt::graph_adopt(summary) re-plans the process from that graph (PARWIDTH_PLAN: the
//      model's predicted fastest when its costs are known, else the width rule): the
//      preload's pools, OpenMP caps and pinning follow the new plan for threads created
//      from now on.
//   4. Write the plan into the framework's own options (inter-op = pools, intra-op =
//      threads per pool), leaving alone every option the user set explicitly unless
//      PARWIDTH_OVERRIDE=1, and note each decision with rt::framework_note so the
//      report's frameworks list says what was applied or kept and why.
// The option functions are call_list.h entries, looked up from the object that
// defines the original, so a library loaded RTLD_LOCAL works too.
#include <string>

#include "governor/graph_adoption.h"
#include "governor/pools.h"
#include "graph/graph.h"
#include "hooks/abi.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/hook.h"
#include "hooks/pools.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

using GetFn = int (*)(const pwe_session_options*);
using SetFn = void (*)(pwe_session_options*, int);

struct OptionApi {
  GetFn get_inter = nullptr, get_intra = nullptr;
  SetFn set_inter = nullptr, set_intra = nullptr;
  // The sizes the session runs at (null in an engine without them: the file's).
  GetFn get_batch = nullptr, get_image_size = nullptr;
};

// The option functions, as the library that defines `real` reaches them:
// its own, where it defines them.
bool option_api_of(const void* real, OptionApi* api) {
  api->get_inter = PW_REAL_AT(pwe_session_options_get_inter_op_threads, real);
  api->get_intra = PW_REAL_AT(pwe_session_options_get_intra_op_threads, real);
  api->set_inter = PW_REAL_AT(pwe_session_options_set_inter_op_threads, real);
  api->set_intra = PW_REAL_AT(pwe_session_options_set_intra_op_threads, real);
  api->get_batch = PW_REAL_AT(pwe_session_options_get_batch, real);
  api->get_image_size = PW_REAL_AT(pwe_session_options_get_image_size, real);
  return api->get_inter && api->get_intra && api->set_inter && api->set_intra;
}

// Step 4 for one option: governor/pools decides (the plan's value unless the
// user chose one, PARWIDTH_OVERRIDE=1, observe mode); this only applies and notes it.
void option_apply(pwe_session_options* o, const char* setting, GetFn get, SetFn set,
                  gov::PoolRole role, const char* why) {
  const gov::PoolContext ctx = pool_context();
  const int want = gov::pool_plan_value(ctx, role);
  const int current = get(o);
  const bool user_set = current > 0;
  gov::PoolKnob knob;
  knob.role = role;
  knob.current = current;
  knob.user_set = user_set;
  const gov::SettingDecision d = gov::pool_knob_decide(ctx, knob);
  if (d.verdict == gov::SettingVerdict::kNoPlan) return;
  if (d.changes()) set(o, d.value);
  rt::framework_note(
      "engine", setting,
      std::to_string(d.changes() ? d.value
                     : user_set  ? current
                                 : want),
      d.changes(),
      d.verdict == gov::SettingVerdict::kApply
          ? std::string(why)
          : std::string(gov::setting_verdict_text(d.verdict)) +
                (user_set ? " (the program set " + std::to_string(current) + ")" : "") + "; " +
                why);
}

void govern_session(const void* model, size_t size, pwe_session_options* opts, const void* real) {
  OptionApi api;
  if (!option_api_of(real, &api)) {
    rt::warn_once("engine-api", "engine: session option functions not found; session left alone");
    return;
  }
  // Step 2: the graph the session will run, exactly the bytes it was given.
  // Shapes give each operator its FLOPs, so the model can plan the session; a
  // graph whose shapes fail still has its width. They are the sizes the session
  // runs at: PARWIDTH_INPUT_SHAPES where the user gave them, else the batch and
  // image size in the session's options (a graph planned at the file's batch 1
  // while it runs at 64 gets another plan, and another fingerprint for the
  // measured plans stored under it), else the file's own.
  graph::Graph g;
  std::string err;
  planning::GraphSummary summary;
  const bool parsed =
      graph::model_parse(model, size, graph::Format::kAuto, &g, &err) == graph::Status::kOk;
  const int batch = api.get_batch ? api.get_batch(opts) : 0;
  const int hw = api.get_image_size ? api.get_image_size(opts) : 0;
  const bool sized = parsed && rt::options().input_shapes.empty() && (batch > 0 || hw > 0);
  const graph::Status costed =
      !parsed ? graph::Status::kBadFormat
      : sized
          ? planning::graph_costed(&g, graph::input_shapes_resized(g, batch, hw), &summary, &err)
          : planning::graph_costed(&g, rt::options().input_shapes, &summary, &err);
  const bool read = costed == graph::Status::kOk;
  if (sized)
    rt::framework_note("engine", "input shapes",
                       "batch " + std::to_string(batch) + ", image size " +
                           (hw > 0 ? std::to_string(hw) : std::string("the model's")),
                       true, "the sizes the session runs at (its options), for the graph's costs");
  const std::string what = "graph (" + std::string(graph::format_name(g.format)) + ")";
  if (!read) {
    rt::framework_note("engine", "graph", "unreadable", false,
                       "planning without the graph: " + err);
  } else if (const gov::GraphAdoption a =
                 gov::graph_adoption(!rt::options().model.empty(), summary.heavy);
             a != gov::GraphAdoption::kAdopt) {
    rt::framework_note("engine", what,
                       a == gov::GraphAdoption::kNoHeavy ? "no heavy operators"
                                                         : "W=" + std::to_string(summary.avg_width),
                       false, gov::graph_adoption_text(a));
  } else {
    // Step 3: re-plan with the session's width.
    summary.source = std::string("engine session (") + graph::format_name(g.format) +
                     (g.name.empty() ? "" : ": " + g.name) + ")";
    rt::graph_adopt(summary);
    rt::framework_note("engine", what,
                       "H=" + std::to_string(summary.heavy) +
                           " L=" + std::to_string(summary.layers) +
                           " W=" + std::to_string(summary.avg_width),
                       true, "plan adopted from the session's graph");
  }
  // Step 4: the framework's own knobs.
  option_apply(opts, "inter_op_threads", api.get_inter, api.set_inter, gov::PoolRole::kInterOp,
               "plan: one inter-op worker per pool");
  option_apply(opts, "intra_op_threads", api.get_intra, api.set_intra, gov::PoolRole::kIntraOp,
               "plan: threads per pool");
}

}  // namespace
}  // namespace pw::hooks

// Step 1: the session constructor.
PW_HOOK(pwe_session*, pwe_session_new,
        (const void* model, size_t size, pwe_session_options* opts, char* err, size_t errlen)) {
  auto real = PW_REAL(pwe_session_new);
  if (!real) {
    PW_MISSING(pwe_session_new);
    if (err && errlen) err[0] = '\0';
    return nullptr;
  }
  {
    // Released before the original runs: the session's own threads are governed.
    pw::hooks::Guard guard;
    if (guard.entered() && opts && model && size && pw::rt::selected() && pw::rt::ensure_active()) {
      // Fail open: the session is created with whatever options it has.
      pw::hooks::fail_open("engine-session", [&] {
        pw::hooks::govern_session(model, size, opts, reinterpret_cast<const void*>(real));
      });
    }
  }
  return real(model, size, opts, err, errlen);
}
