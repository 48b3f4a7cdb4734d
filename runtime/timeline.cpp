// runtime/timeline: the report's plan_timeline and in_force objects, and the
// runtimes' own values they are checked against.
#include <time.h>

#include <algorithm>

#include "core/json.h"
#include "runtime/fail_open.h"
#include "runtime/state.h"

namespace pw::rt {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void runtime_values_set(std::vector<RuntimeValue> values) {
  if (!g) return;
  std::lock_guard<std::mutex> lock(g->mu);
  g->runtime_values = std::move(values);
  g->runtime_values_given = true;
}

std::string timeline_json(const Runtime& r) {
  size_t dropped = 0;
  const std::vector<TimelineEntry> entries = r.owner.timeline(&dropped);
  const uint64_t t0 = entries.empty() ? 0 : entries.front().t_ns;
  json::Writer w;
  w.begin_array();
  for (size_t i = 0; i < entries.size(); ++i) {
    const TimelineEntry& e = entries[i];
    if (dropped > 0 && i == PlanOwner::kTimelineHead) {
      w.begin_object().key("not_kept").value(static_cast<long long>(dropped)).end_object();
    }
    w.begin_object();
    w.key("generation").value(e.generation);
    w.key("t_s").value(static_cast<double>(e.t_ns - t0) / 1e9);
    w.key("cause").value(e.cause);
    w.key("pools").value(e.pools);
    w.key("threads").value(e.threads);
    w.key("omp_cap").value(e.omp_cap);
    w.key("cpus").ints(e.cpus);
    w.key("applied").strings(e.applied);
    w.end_object();
  }
  w.end_array();
  return w.str();
}

std::string in_force_json(Runtime& r, const InForce& now) {
  std::vector<RuntimeValue> values;
  bool given = false;
  std::vector<Runtime::FixedPool> fixed;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    values = r.runtime_values;
    given = r.runtime_values_given;
    fixed = r.fixed_pools;
  }
  // Not read by the program's side (not a Python process, or it exited without
  // running atexit): what the hooks can read safely at exit.
  if (!given && g_hooks.runtime_values) {
    if (!fail_open("runtime-values", [&] { g_hooks.runtime_values(&values); })) values.clear();
  }
  json::Writer w;
  w.begin_object();
  w.key("generation").value(now.generation);
  w.key("cause").value(now.cause);
  w.key("pools").value(now.plan.pools);
  w.key("threads").value(now.plan.threads);
  w.key("omp_cap").value(now.omp_cap);
  w.key("cpus").ints(now.budget.cpus);
  const gov::PinMode pin = gov::pin_in_force(r.opt.pin, now.children, r.forked_child);
  w.key("pin").value(pin == gov::PinMode::kCore   ? "core"
                     : pin == gov::PinMode::kPool ? "pool"
                                                  : "none");
  // How many changes of each kind came into force (the timeline keeps only its
  // first and latest entries), and plans computed again because another change
  // landed meanwhile.
  const std::vector<unsigned> counts = r.owner.counts();
  const char* const kinds[] = {"activation", "graph", "node", "monitor", "children"};
  w.key("changes").begin_object();
  for (size_t i = 0; i < counts.size() && i < 5; ++i) w.key(kinds[i]).value(counts[i]);
  w.key("recomputed").value(r.owner.recomputed());
  w.end_object();
  w.key("read").value(given ? "before exit, from the program's side (Python's atexit)"
                            : "at exit: the OpenMP runtimes and BLAS pools (torch's counts and "
                              "ONNX Runtime sessions are read in Python processes)");
  w.key("runtimes").begin_array();
  for (const RuntimeValue& v : values) {
    w.begin_object();
    w.key("runtime").value(v.runtime);
    w.key("object").value(v.object);
    w.key("setting").value(v.setting);
    w.key("value").value(v.value);
    if (!v.waits.empty()) w.key("waits").value(v.waits);
    w.end_object();
  }
  // Pools a framework made once (TensorFlow's, ORT's C API sessions): the size
  // they were made with is the size they have.
  for (const Runtime::FixedPool& f : fixed) {
    w.begin_object();
    w.key("runtime").value(f.framework);
    w.key("object").value("thread pool " + f.pool);
    w.key("setting").value("threads (as made; cannot be resized)");
    w.key("value").value(f.threads);
    if (f.framework == "tensorflow")
      w.key("waits").value(pool_wait_text(gov::WaitKnob::kTfSpinning, f.pool));
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace pw::rt
