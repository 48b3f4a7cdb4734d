// cli/store: reading a governed run's report and storing a measured plan.
#include "cli/store.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/args.h"
#include "core/cache.h"
#include "graph/json_value.h"

namespace pw::cli {

bool report_read(const std::string& path, ReportPlan* out, std::string* why) {
  std::ifstream f(path);
  if (!f) return *why = "no report at " + path, false;
  std::stringstream ss;
  ss << f.rdbuf();
  graph::json::Value root;
  if (!graph::json::parse(ss.str(), &root, why))
    return *why = "report " + path + ": " + *why, false;
  // A program that never activated the preload (no threads, no graph) has no
  // plan: no fingerprint either, which the caller explains.
  const graph::json::Value* plan = root.get("plan");
  if (!plan || plan->type != graph::json::Value::kObject) return true;
  if (const auto* v = plan->get("pools")) out->pools = static_cast<int>(v->num);
  if (const auto* v = plan->get("threads")) out->threads = static_cast<int>(v->num);
  if (const auto* v = plan->get("source")) out->source = v->str;
  if (const auto* v = plan->get("predicted"))
    for (const graph::json::Value& c : v->arr) {
      gov::Plan::Predicted x;
      if (const auto* n = c.get("pools")) x.pools = static_cast<int>(n->num);
      if (const auto* n = c.get("intra")) x.threads = static_cast<int>(n->num);
      if (const auto* n = c.get("seconds")) x.seconds = n->num;
      out->predicted.push_back(x);
    }
  if (const auto* g = root.get("graph"); g && g->type == graph::json::Value::kObject) {
    if (const auto* v = g->get("fingerprint"); v && v->type == graph::json::Value::kString)
      out->fingerprint = v->str;
    if (const auto* v = g->get("source")) out->graph_source = v->str;
  }
  return true;
}

bool measured_save(const planning::Planned& p, const std::string& fingerprint,
                   const gov::MeasuredPlan& m, std::string* path, std::string* why) {
  gov::StoredPlan s;
  s.machine = cache::machine_id(p.machine);
  s.budget = cache::budget_id(p.budget);
  s.graph = fingerprint;
  s.plan = m;
  s.plan.version = version();
  return cache::measured_store(cache::cache_dir(env_get), s, path, why);
}

const char* version() {
  return PW_VERSION;
}

}  // namespace pw::cli
