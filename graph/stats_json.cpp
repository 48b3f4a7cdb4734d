// Stats as one JSON object: `parwidth width --json`, the report and `parwidth plan` share it.
#include <cmath>
#include <cstdio>

#include "graph/graph.h"
#include "graph/json_value.h"

namespace pw::graph {
namespace {

void append_double(std::string* o, double d) {
  if (!std::isfinite(d)) d = 0;  // JSON has no inf/nan; never produced by stats_compute
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.6g", d);
  *o += buf;
}

void append_stats(std::string* o, const Stats& s, bool top) {
  *o += "{\"source\":";
  json::append_quoted(o, s.source);
  *o += ",\"name\":";
  json::append_quoted(o, s.name);
  *o += ",\"nodes\":" + std::to_string(s.nodes);
  *o += ",\"heavy\":" + std::to_string(s.heavy);
  *o += ",\"layers\":" + std::to_string(s.layers);
  *o += ",\"avg_width\":" + std::to_string(s.avg_width);
  *o += ",\"max_level_width\":" + std::to_string(s.max_level_width);
  *o += ",\"weighted_parallelism\":";
  append_double(o, s.weighted_parallelism);
  *o += ",\"costs\":";
  json::append_quoted(o, s.costs);
  *o += ",\"work_flops\":";
  append_double(o, s.work_flops);
  *o += ",\"span_flops\":";
  append_double(o, s.span_flops);
  *o += ",\"work_over_span\":";
  append_double(o, s.work_over_span);
  *o += ",\"bytes\":";
  append_double(o, s.bytes);
  *o += ",\"flops_known_nodes\":" + std::to_string(s.known_flops_nodes);
  *o += ",\"heavy_by_type\":{";
  bool first = true;
  for (const auto& [op, count] : s.heavy_by_type) {
    if (!first) o->push_back(',');
    first = false;
    json::append_quoted(o, op);
    *o += ":" + std::to_string(count);
  }
  o->push_back('}');
  if (!s.note.empty()) {
    *o += ",\"note\":";
    json::append_quoted(o, s.note);
  }
  if (top) {
    *o += ",\"subgraphs\":[";
    for (size_t i = 0; i < s.subgraphs.size(); ++i) {
      if (i) o->push_back(',');
      append_stats(o, s.subgraphs[i], false);
    }
    o->push_back(']');
  }
  o->push_back('}');
}

}  // namespace

std::string stats_to_json(const Stats& s) {
  std::string o;
  try {
    append_stats(&o, s, true);
  } catch (...) {
    o = "{}";  // out of memory: an empty object keeps callers' JSON well-formed
  }
  return o;
}

}  // namespace pw::graph
