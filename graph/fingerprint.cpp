// graph/fingerprint: a stable hash of the executed graph, the key of measured plans.
#include <cstdio>

#include "graph/graph.h"

namespace pw::graph {
namespace {

// FNV-1a, 64 bits: a cache key among a user's few graphs, not a defence.
struct Hash {
  uint64_t h = 1469598103934665603ULL;
  void bytes(const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 1099511628211ULL;
    }
  }
  void text(const std::string& s) {
    bytes(s.data(), s.size());
    bytes("", 1);  // a terminator: "ab"+"c" differs from "a"+"bc"
  }
  void num(int64_t v) { bytes(&v, sizeof v); }
  // Costs as text with 6 significant digits: the same value from another reader
  // (ONNX bytes or file, the same arithmetic) hashes the same.
  void cost(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v < 0 ? -1.0 : v);
    text(buf);
  }
};

}  // namespace

std::string fingerprint(const Graph& g) {
  Hash h;
  h.text("parwidth-graph 1");
  h.num(static_cast<int64_t>(g.nodes.size()));
  for (const Node& n : g.nodes) {
    h.text(n.op);
    h.num(static_cast<int64_t>(n.preds.size()));
    for (uint32_t p : n.preds) h.num(p);
    h.num(static_cast<int64_t>(n.out.size()));
    for (const TensorInfo& t : n.out) {
      h.num(t.rank);
      for (int64_t d : t.dims) h.num(d);
    }
    h.num(static_cast<int64_t>(n.shape.size()));
    for (int64_t d : n.shape) h.num(d);
    h.cost(n.flops);
    h.cost(n.bytes);
  }
  char buf[20];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h.h));
  return buf;
}

}  // namespace pw::graph
