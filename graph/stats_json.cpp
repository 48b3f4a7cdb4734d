// Stats as one JSON object: `parwidth width --json`, the report and `parwidth plan` share it.
#include <cmath>
#include <cstdio>

#include "graph/graph.h"

namespace pw::graph {
namespace {

void append_string(std::string* o, const std::string& s) {
  o->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        *o += "\\\"";
        break;
      case '\\':
        *o += "\\\\";
        break;
      case '\n':
        *o += "\\n";
        break;
      case '\r':
        *o += "\\r";
        break;
      case '\t':
        *o += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *o += buf;
        } else {
          o->push_back(static_cast<char>(c));
        }
    }
  }
  o->push_back('"');
}

void append_double(std::string* o, double d) {
  if (!std::isfinite(d)) d = 0;  // JSON has no inf/nan; never produced by stats_compute
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.6g", d);
  *o += buf;
}

void append_stats(std::string* o, const Stats& s, bool top) {
  *o += "{\"source\":";
  append_string(o, s.source);
  *o += ",\"name\":";
  append_string(o, s.name);
  *o += ",\"nodes\":" + std::to_string(s.nodes);
  *o += ",\"heavy\":" + std::to_string(s.heavy);
  *o += ",\"layers\":" + std::to_string(s.layers);
  *o += ",\"avg_width\":" + std::to_string(s.avg_width);
  *o += ",\"max_level_width\":" + std::to_string(s.max_level_width);
  *o += ",\"weighted_parallelism\":";
  append_double(o, s.weighted_parallelism);
  *o += ",\"costs\":";
  append_string(o, s.costs);
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
    append_string(o, op);
    *o += ":" + std::to_string(count);
  }
  o->push_back('}');
  if (!s.note.empty()) {
    *o += ",\"note\":";
    append_string(o, s.note);
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
