// hooks/tf: TensorFlow sessions and eager contexts get the plan's inter-op
// (pools) and intra-op (threads per pool) thread counts, appended to the
// program's own serialized ConfigProto (protobuf: the last value of a field
// wins), and TensorFlow's thread pools are attributed for pinning.
//
// What crosses a library boundary in the wheel, and why these points were
// chosen: hooks/README.md, "TensorFlow".
#include <errno.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/model_file.h"
#include "governor/graph_adoption.h"
#include "governor/pools_tf.h"
#include "governor/pools_wait.h"
#include "graph/graph.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/pools.h"
#include "hooks/slots.h"
#include "hooks/tf_common.h"
#include "hooks/tf_config.h"
#include "runtime/api.h"
#include "runtime/functions.h"

namespace pw::hooks {
namespace {

using tf::config_scan;
using tf::field_append;
using tf::forget_options;
using tf::kInterField;
using tf::kIntraField;
using tf::mark_ctx_configured;
using tf::remember_session_config;
using tf::session_config_of;
using tf::take_ctx_configured;
using tf::UserConfig;

long env_threads(const char* name) {
  const char* s = getenv(name);
  if (!s || !*s) return 0;
  char* e = nullptr;
  const long v = strtol(s, &e, 10);
  return *e == '\0' && v > 0 ? v : 0;
}

// What this process asked TensorFlow for, so the pool notes can say whether
// TensorFlow followed (0 = we asked nothing).
std::atomic<long> g_asked_inter{0}, g_asked_intra{0};
std::mutex g_note_mu;
// How the plan was chosen, for the notes' "why". Heap objects, never
// destroyed: hooks may run while the process exits, and a global with a
// destructor would also cost every process a static initialiser.
std::string& graph_note() {
  static std::string* s = new std::string();
  return *s;
}

std::string plan_reason() {
  std::string why = "plan: ";
  {
    std::lock_guard<std::mutex> lock(g_note_mu);
    if (!graph_note().empty()) return why + graph_note();
  }
  if (!rt::options().model.empty()) return why + "graph from PARWIDTH_MODEL";
  return why + "no graph known yet (PARWIDTH_MODEL not set)";
}

// The fields to append to the program's config for `what` ("session",
// "eager context"), and one report entry per setting.
std::string config_extra(const char* what, const UserConfig& user) {
  std::string extra;
  const std::string who = std::string("tensorflow");
  rt::fixed_pools_prepare();  // the session's (or eager context's) pools keep their size
  if (!user.readable) {
    rt::framework_note(who, std::string(what) + " ConfigProto", "unreadable", false,
                       "the program's serialized config could not be walked; left as it was");
    return extra;
  }
  // Made once: while fewer governed processes than expected are on the node,
  // for the share this one will have when they are there.
  std::string expected;
  const gov::Plan plan = rt::fixed_pools_plan(&expected);
  const std::string reason = expected.empty() ? plan_reason() : plan_reason() + "; " + expected;
  const gov::PoolContext ctx = pool_context(plan);
  struct Knob {
    const char* setting;
    gov::TfKnob knob;
    int field;
    long user;
    const char* env;
    std::atomic<long>* asked;
  } knobs[] = {
      {"inter_op_parallelism_threads", gov::TfKnob::kInterOp, kInterField, user.inter,
       "TF_NUM_INTEROP_THREADS", &g_asked_inter},
      {"intra_op_parallelism_threads", gov::TfKnob::kIntraOp, kIntraField, user.intra,
       "TF_NUM_INTRAOP_THREADS", &g_asked_intra},
  };
  for (const Knob& k : knobs) {
    const std::string setting = std::string(what) + " " + k.setting;
    gov::TfKnobFacts f;
    f.knob = k.knob;
    f.config = static_cast<int>(k.user);
    f.env = static_cast<int>(env_threads(k.env));
    f.graph_known = rt::graph_known();
    f.pools_given = rt::options().pools > 0;
    f.share_expected = !expected.empty();
    const gov::TfKnobDecision d = gov::tf_knob_decide(ctx, f);
    std::string mine;
    if (d.user == gov::TfUserSource::kConfig)
      mine = "set to " + std::to_string(d.user_value) + " in the program's ConfigProto";
    else if (d.user == gov::TfUserSource::kEnv)
      mine = std::string(k.env) + "=" + std::to_string(d.user_value) + " set by the user";
    const char* verdict_text = gov::setting_verdict_text(d.setting.verdict);
    switch (d.verdict) {
      case gov::TfKnobVerdict::kKeep:
        rt::framework_note(who, setting, std::to_string(d.setting.value), false,
                           mine + "; " + verdict_text);
        continue;
      case gov::TfKnobVerdict::kUnchanged:  // observe mode, or no plan value
        rt::framework_note(who, setting, std::to_string(d.plan), false,
                           std::string(verdict_text) + " (" + reason + ")");
        continue;
      case gov::TfKnobVerdict::kTfDefault:
        rt::framework_note(who, setting, "TensorFlow's default", false,
                           "no model graph known: TensorFlow's inter-op default kept "
                           "(PARWIDTH_MODEL or PARWIDTH_POOLS plans it)");
        continue;
      case gov::TfKnobVerdict::kPlan:
      case gov::TfKnobVerdict::kTfDefaultOnShare:
        break;
    }
    const std::string why =
        d.verdict == gov::TfKnobVerdict::kTfDefaultOnShare
            ? "no model graph known: TensorFlow's inter-op default (one per core) on the share; " +
                  expected
            : reason;
    field_append(&extra, k.field, static_cast<uint64_t>(d.value));
    k.asked->store(d.value);
    rt::framework_note(
        who, setting, std::to_string(d.value), true,
        mine.empty() ? why : why + "; replaced what was " + mine + " (PARWIDTH_OVERRIDE=1)");
  }
  return extra;
}

// --- the session's graph -----------------------------------------------------

// The graph's operators are costed (shapes from the graph, PARWIDTH_INPUT_SHAPES
// where given) so that the plan can come from the model, as the engine's do.
void adopt_graph_of(graph::Graph* g, const std::string& source) {
  planning::GraphSummary sum;
  std::string err;
  if (planning::graph_costed(g, rt::options().input_shapes, &sum, &err) != graph::Status::kOk) {
    rt::warn_once("tf-graph-stats", "tensorflow: no width statistics for the " + source + " (" +
                                        err + "); planning without it");
    return;
  }
  const gov::GraphAdoption a = gov::graph_adoption(!rt::options().model.empty(), sum.heavy);
  if (a != gov::GraphAdoption::kAdopt) {
    rt::framework_note("tensorflow", "graph (" + source + ")",
                       a == gov::GraphAdoption::kNoHeavy ? "no heavy operators"
                                                         : "W=" + std::to_string(sum.avg_width),
                       false, gov::graph_adoption_text(a));
    return;
  }
  sum.source = source;
  rt::graph_adopt(sum);
  const gov::Plan& p = rt::plan();
  std::lock_guard<std::mutex> lock(g_note_mu);
  graph_note() = source + " H=" + std::to_string(sum.heavy) + " L=" + std::to_string(sum.layers) +
                 " W=" + std::to_string(sum.avg_width) + " costs=" + sum.costs + " -> " +
                 std::to_string(p.pools) + " pools x " + std::to_string(p.threads) + " threads (" +
                 p.source + ")";
}

// Reads the session's graph through the C API and re-plans with its width.
void plan_from_graph(TF_Graph* graph, const void* pc) {
  auto new_buffer = PW_REAL_AT(TF_NewBuffer, pc);
  auto delete_buffer = PW_REAL_AT(TF_DeleteBuffer, pc);
  auto new_status = PW_REAL_AT(TF_NewStatus, pc);
  auto delete_status = PW_REAL_AT(TF_DeleteStatus, pc);
  auto to_graphdef = PW_REAL_AT(TF_GraphToGraphDef, pc);
  if (!graph || !new_buffer || !delete_buffer || !new_status || !delete_status || !to_graphdef) {
    rt::warn_once("tf-graph",
                  "tensorflow: TF_GraphToGraphDef not found; planning without the "
                  "session's graph");
    return;
  }
  TF_Buffer* buf = new_buffer();
  TF_Status* st = new_status();
  if (buf && st) {
    to_graphdef(graph, buf, st);
    if (status_code(st, pc) == 0 && buf->data && buf->length > 0) {
      graph::Graph g;
      std::string err;
      graph::Status s =
          graph::model_parse(buf->data, buf->length, graph::Format::kTfGraphDef, &g, &err);
      if (s == graph::Status::kOk)
        adopt_graph_of(&g, "tensorflow session graph");
      else
        rt::warn_once("tf-graph-parse", "tensorflow: the session's GraphDef could not be read (" +
                                            std::string(status_name(s)) + ": " + err +
                                            "); planning without it");
    }
  }
  if (st) delete_status(st);
  if (buf) delete_buffer(buf);
}

// Before the eager context is sized (once per process): the graph an earlier
// run of this program remembered, unless the plan already has a graph.
std::atomic<bool> g_recalled{false};
void eager_recall() {
  if (g_recalled.exchange(true)) return;
  if (!gov::graph_recalled(!rt::options().model.empty(), rt::graph_known())) return;
  planning::GraphSummary sum;
  std::string warning;
  const bool found = functions::recall(&sum, &warning);
  if (!warning.empty()) rt::warn_once("function-memory", warning);
  if (!found || !rt::graph_adopt(sum)) return;
  const gov::Plan& p = rt::plan();
  std::lock_guard<std::mutex> lock(g_note_mu);
  graph_note() = sum.source + " H=" + std::to_string(sum.heavy) +
                 " L=" + std::to_string(sum.layers) + " W=" + std::to_string(sum.avg_width) +
                 " costs=" + sum.costs + " -> " + std::to_string(p.pools) + " pools x " +
                 std::to_string(p.threads) + " threads (" + p.source + ")";
}

// Sets opts' config to the program's bytes plus our fields; restores the
// program's own bytes if TensorFlow refuses the combination.
void session_config_apply(TF_SessionOptions* opts, const char* what, const void* pc) {
  auto set_config = PW_REAL_AT(TF_SetConfig, pc);
  auto new_status = PW_REAL_AT(TF_NewStatus, pc);
  auto delete_status = PW_REAL_AT(TF_DeleteStatus, pc);
  if (!set_config || !new_status || !delete_status) return;
  const std::string user = session_config_of(opts);
  const std::string extra = config_extra(what, config_scan(user.data(), user.size()));
  if (extra.empty()) return;
  const std::string combined = user + extra;
  TF_Status* st = new_status();
  if (!st) return;
  set_config(opts, combined.data(), combined.size(), st);
  if (status_code(st, pc) != 0) {
    set_config(opts, user.data(), user.size(), st);
    rt::warn_once("tf-config",
                  "tensorflow: the session config with parwidth's fields was "
                  "refused; the program's own config stands");
  }
  delete_status(st);
}

}  // namespace

int status_code(TF_Status* st, const void* pc) {
  auto get_code = PW_REAL_AT(TF_GetCode, pc);
  return get_code && st ? get_code(st) : -1;
}

bool tf_active() {
  return rt::selected() && rt::ensure_active();
}

}  // namespace pw::hooks

using pw::hooks::Guard;

// A new options object may reuse the address of a freed one: forget what
// that one was told.
template <typename T>
T* fresh_options(T* o) {
  Guard guard;
  if (o && guard.entered() && pw::rt::selected()) {
    pw::hooks::fail_open("tf-options", [&] { pw::hooks::forget_options(o); });
  }
  return o;
}

PW_HOOK(TF_SessionOptions*, TF_NewSessionOptions, (void)) {
  auto real = PW_REAL(TF_NewSessionOptions);
  return real ? fresh_options(real()) : (PW_MISSING(TF_NewSessionOptions), nullptr);
}

PW_HOOK(void, TF_SetConfig,
        (TF_SessionOptions * options, const void* proto, size_t proto_len, TF_Status* status)) {
  auto real = PW_REAL(TF_SetConfig);
  if (!real) {
    PW_MISSING(TF_SetConfig);
    return;
  }
  {
    // Inside TFE_ContextOptionsSetConfig (which calls this) the guard is held.
    Guard guard;
    if (guard.entered() && pw::rt::selected()) {
      pw::hooks::fail_open("tf-set-config",
                           [&] { pw::hooks::remember_session_config(options, proto, proto_len); });
    }
  }
  real(options, proto, proto_len, status);
}

PW_HOOK(TF_Session*, TF_NewSession,
        (TF_Graph * graph, const TF_SessionOptions* opts, TF_Status* status)) {
  auto real = PW_REAL(TF_NewSession);
  if (!real) {
    PW_MISSING(TF_NewSession);
    return nullptr;
  }
  const void* pc = __builtin_return_address(0);
  {
    Guard guard;
    if (guard.entered() && opts && pw::hooks::tf_active()) {
      pw::hooks::fail_open("tf-session", [&] {
        pw::hooks::plan_from_graph(graph, pc);
        pw::hooks::session_config_apply(const_cast<TF_SessionOptions*>(opts), "session", pc);
      });
    }
  }
  // Not under the guard: the session's pools are created here and must be governed.
  return real(graph, opts, status);
}

PW_HOOK(TF_Session*, TF_LoadSessionFromSavedModel,
        (const TF_SessionOptions* session_options, const TF_Buffer* run_options,
         const char* export_dir, const char* const* tags, int tags_len, TF_Graph* graph,
         TF_Buffer* meta_graph_def, TF_Status* status)) {
  auto real = PW_REAL(TF_LoadSessionFromSavedModel);
  if (!real) {
    PW_MISSING(TF_LoadSessionFromSavedModel);
    return nullptr;
  }
  const void* pc = __builtin_return_address(0);
  {
    Guard guard;
    if (guard.entered() && session_options && export_dir && pw::hooks::tf_active()) {
      pw::hooks::fail_open("tf-saved-model", [&] {
        // The graph is filled in by the load itself: read the SavedModel first.
        pw::graph::Graph g;
        std::string err;
        if (pw::files::model_load(export_dir, &g, &err) == pw::graph::Status::kOk)
          pw::hooks::adopt_graph_of(&g, std::string("tensorflow SavedModel ") + export_dir);
        pw::hooks::session_config_apply(const_cast<TF_SessionOptions*>(session_options), "session",
                                        pc);
      });
    }
  }
  return real(session_options, run_options, export_dir, tags, tags_len, graph, meta_graph_def,
              status);
}

PW_HOOK(TFE_ContextOptions*, TFE_NewContextOptions, (void)) {
  auto real = PW_REAL(TFE_NewContextOptions);
  return real ? fresh_options(real()) : (PW_MISSING(TFE_NewContextOptions), nullptr);
}

PW_HOOK(void, TFE_ContextOptionsSetConfig,
        (TFE_ContextOptions * options, const void* proto, size_t proto_len, TF_Status* status)) {
  auto real = PW_REAL(TFE_ContextOptionsSetConfig);
  if (!real) {
    PW_MISSING(TFE_ContextOptionsSetConfig);
    return;
  }
  const void* pc = __builtin_return_address(0);
  Guard guard;  // held through the real call: its inner TF_SetConfig is not the program's
  std::string combined;
  bool changed = false;
  if (guard.entered() && options && pw::hooks::tf_active()) {
    const bool ok = pw::hooks::fail_open("tfe-config", [&] {
      pw::hooks::eager_recall();
      const std::string extra = pw::hooks::config_extra(
          "eager context", pw::hooks::config_scan(proto, proto ? proto_len : 0));
      pw::hooks::mark_ctx_configured(options);
      if (!extra.empty()) {
        combined.assign(static_cast<const char*>(proto), proto ? proto_len : 0);
        combined += extra;
        changed = true;
      }
    });
    changed = changed && ok;
  }
  if (changed) {
    real(options, combined.data(), combined.size(), status);
    if (pw::hooks::status_code(status, pc) == 0) return;
    pw::rt::warn_once("tfe-config",
                      "tensorflow: the eager config with parwidth's fields was "
                      "refused; the program's own config stands");
  }
  real(options, proto, proto_len, status);
}

PW_HOOK(TFE_Context*, TFE_NewContext, (const TFE_ContextOptions* opts, TF_Status* status)) {
  auto real = PW_REAL(TFE_NewContext);
  if (!real) {
    PW_MISSING(TFE_NewContext);
    return nullptr;
  }
  const void* pc = __builtin_return_address(0);
  {
    Guard guard;
    if (guard.entered() && opts && pw::hooks::tf_active()) {
      pw::hooks::fail_open("tfe-new-context", [&] {
        // A program that never set a config: give the context ours alone.
        if (!pw::hooks::take_ctx_configured(opts)) {
          pw::hooks::eager_recall();
          auto set = PW_REAL_AT(TFE_ContextOptionsSetConfig, pc);
          auto new_status = PW_REAL_AT(TF_NewStatus, pc);
          auto delete_status = PW_REAL_AT(TF_DeleteStatus, pc);
          const std::string extra = pw::hooks::config_extra("eager context", {});
          if (set && new_status && delete_status && !extra.empty()) {
            TF_Status* st = new_status();
            if (st) {
              set(const_cast<TFE_ContextOptions*>(opts), extra.data(), extra.size(), st);
              delete_status(st);
            }
          }
        }
      });
    }
  }
  // Not under the guard: the context's pools are created here.
  return real(opts, status);
}

#define PW_TF_THREADPOOL \
  _ZN3tsl6thread10ThreadPoolC1EPNS_3EnvERKNS_13ThreadOptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEibPN5Eigen9AllocatorE

// TensorFlow's own statement of each pool's size, and its threads spread over
// the plan's pools: every thread the constructor starts is created from a
// non-member, so consecutive threads go to consecutive pools (inter-op thread
// k in pool k; the shared intra-op pool over all pools' cores).
PW_HOOK(void, PW_TF_THREADPOOL,
        (void* self, void* env, const void* thread_options, const void* name, int num_threads,
         bool low_latency_hint, void* allocator)) {
  auto real = PW_REAL(PW_TF_THREADPOOL);
  if (!real) {
    PW_MISSING(PW_TF_THREADPOOL);  // a constructor cannot fail: the object would be garbage
    abort();
  }
  int saved_pool = -1;
  bool active = false;
  {
    Guard guard;
    if (guard.entered() && pw::hooks::tf_active()) {
      active = true;
      pw::gov::TfPoolStart start;
      pw::hooks::fail_open("tf-thread-pool", [&] {
        const std::string n = *static_cast<const std::string*>(name);
        const pw::gov::TfPool pool = pw::gov::tf_pool_of(n);
        const pw::gov::PoolContext ctx = pw::hooks::pool_context();
        start = pw::gov::tf_pool_start(ctx, pool);
        const long asked = pool == pw::gov::TfPool::kInterOp   ? pw::hooks::g_asked_inter.load()
                           : pool == pw::gov::TfPool::kIntraOp ? pw::hooks::g_asked_intra.load()
                                                               : 0;
        const char* kind = pool == pw::gov::TfPool::kInterOp   ? "inter-op"
                           : pool == pw::gov::TfPool::kIntraOp ? "intra-op"
                                                               : "";
        std::string why = std::string("TensorFlow created its ") + kind + " pool '" + n +
                          "' with " + std::to_string(num_threads) + " threads";
        if (asked > 0) why += " (parwidth asked " + std::to_string(asked) + ")";
        if (start.pinned)
          why += "; its threads are dealt over the plan's " + std::to_string(ctx.pools) +
                 " pools and pinned";
        if (start.noted) {
          pw::rt::framework_note("tensorflow", std::string("thread pool ") + n,
                                 std::to_string(num_threads), asked == num_threads, why);
          pw::rt::fixed_pool_made("tensorflow", n, num_threads);
          // How its idle threads wait: TensorFlow passes the low-latency hint as
          // !disable_thread_spinning; a pool it makes without it spins not at all.
          pw::gov::WaitFacts wait;
          wait.knob = pw::gov::WaitKnob::kTfSpinning;
          wait.user_set = !low_latency_hint;
          wait.node_may_share = pw::rt::node_may_share();
          const pw::gov::WaitDecision w = pw::gov::wait_decide(ctx, wait);
          pw::rt::wait_decided(pw::gov::WaitKnob::kTfSpinning, w);
          if (w.changes()) low_latency_hint = false;
          if (w.verdict != pw::gov::WaitVerdict::kKeep)
            pw::rt::framework_note("tensorflow", std::string("thread pool ") + n + " spinning",
                                   w.changes() ? "off" : "on", w.changes(),
                                   pw::gov::wait_verdict_text(w.verdict));
        }
      });
      saved_pool = pw::rt::current_pool();
      if (start.placement == pw::gov::WorkerPlacement::kDealt) pw::rt::current_pool_set(-1);
    }
  }
  real(self, env, thread_options, name, num_threads, low_latency_hint, allocator);
  if (active) pw::rt::current_pool_set(saved_pool);
}
