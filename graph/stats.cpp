// The width statistics of docs/design.md over one graph: Kahn's topological order, one pass.
//
// Iterative on purpose: models reach 10^6 nodes and chains of that length would overflow
// the stack of a recursive depth-first search. Time and memory are O(nodes + edges).
#include <algorithm>
#include <new>

#include "graph/graph.h"

namespace pw::graph {
namespace {

Status stats_one(const Graph& g, Stats* out, std::string* err) {
  const size_t n = g.nodes.size();
  Stats s;
  s.source = std::string(format_name(g.format)) + ":" + g.path;
  s.name = g.name;
  s.note = g.note;
  s.nodes = n;

  // Successor lists in CSR form: two flat arrays instead of a vector per node.
  std::vector<uint32_t> indeg(n, 0), succ_begin(n + 1, 0);
  for (size_t v = 0; v < n; ++v) {
    for (uint32_t u : g.nodes[v].preds) {
      if (u >= n) {
        if (err) *err = "node '" + g.nodes[v].name + "' has a predecessor index out of range";
        return Status::kBadFormat;
      }
      ++succ_begin[u + 1];
    }
    indeg[v] = static_cast<uint32_t>(g.nodes[v].preds.size());
  }
  for (size_t i = 0; i < n; ++i) succ_begin[i + 1] += succ_begin[i];
  std::vector<uint32_t> succ(succ_begin[n]);
  {
    std::vector<uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (size_t v = 0; v < n; ++v)
      for (uint32_t u : g.nodes[v].preds) succ[fill[u]++] = static_cast<uint32_t>(v);
  }

  // Costs are FLOPs only if every heavy node has them (above 0); one unknown or zero makes
  // them all unit.
  // One sequential pass over the (large) Node structs; the topological pass below then only
  // touches small flat arrays, which keeps 10^6-node graphs in cache-friendly territory.
  bool flops = true;
  std::vector<uint8_t> heavy(n, 0);
  for (size_t v = 0; v < n; ++v) {
    const Node& node = g.nodes[v];
    if (!node.heavy) continue;
    heavy[v] = 1;
    ++s.heavy;
    ++s.heavy_by_type[node.op];
    if (!(node.flops > 0)) flops = false;
    if (node.flops >= 0) {
      s.heavy_flops_by_type[node.op] += node.flops;
      s.heavy_flops += node.flops;
    }
  }
  flops = flops && s.heavy > 0;
  s.costs = flops ? "flops" : "unit";
  // Work and span in FLOPs over every node with known FLOPs (unknown ones count 0).
  std::vector<double> fl(n, 0.0), fl_pred(n, 0.0);
  for (size_t v = 0; v < n; ++v) {
    const Node& node = g.nodes[v];
    if (node.flops >= 0) {
      fl[v] = node.flops;
      s.work_flops += node.flops;
      ++s.known_flops_nodes;
    }
    if (node.bytes > 0) s.bytes += node.bytes;
  }
  std::vector<double> cost(n, 0.0), pred_max(n, 0.0);
  double total = 0, span = 0;
  for (size_t v = 0; v < n; ++v)
    if (heavy[v]) total += cost[v] = flops ? g.nodes[v].flops : 1.0;

  // depth: heavy ops on the longest path ending at v; path: cost of the costliest such path.
  std::vector<uint32_t> depth(n, 0);
  std::vector<double>& path = cost;  // cost[v] becomes the path cost once v is reached
  std::vector<uint32_t> order;
  order.reserve(n);
  for (size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) order.push_back(static_cast<uint32_t>(v));
  std::vector<uint64_t> level_count;
  for (size_t head = 0; head < order.size(); ++head) {
    const uint32_t v = order[head];
    // On arrival depth/path hold the max over predecessors; add v's own part.
    if (heavy[v]) {
      ++depth[v];
      if (level_count.size() <= depth[v]) level_count.resize(depth[v] + 1, 0);
      ++level_count[depth[v]];
    }
    s.layers = std::max<uint64_t>(s.layers, depth[v]);
    span = std::max(span, path[v]);
    s.span_flops = std::max(s.span_flops, fl[v]);
    for (uint32_t i = succ_begin[v]; i < succ_begin[v + 1]; ++i) {
      const uint32_t w = succ[i];
      depth[w] = std::max(depth[w], depth[v]);
      pred_max[w] = std::max(pred_max[w], path[v]);
      fl_pred[w] = std::max(fl_pred[w], fl[v]);
      if (--indeg[w] == 0) {
        path[w] += pred_max[w];
        fl[w] += fl_pred[w];
        order.push_back(w);
      }
    }
  }
  if (order.size() != n) {
    if (err)
      *err = "graph '" + g.name + "' has a cycle (" + std::to_string(n - order.size()) +
             " nodes on or behind it)";
    return Status::kCycle;
  }
  s.avg_width = s.layers == 0 ? 1 : std::max<uint64_t>(1, s.heavy / s.layers);
  for (uint64_t c : level_count) s.max_level_width = std::max(s.max_level_width, c);
  s.weighted_parallelism = span > 0 ? total / span : 1.0;
  s.work_over_span = s.span_flops > 0 ? s.work_flops / s.span_flops : 1.0;
  *out = std::move(s);
  return Status::kOk;
}

}  // namespace

Status stats_compute(const Graph& g, Stats* out, std::string* err) {
  try {
    Stats s;
    Status st = stats_one(g, &s, err);
    if (st != Status::kOk) return st;
    s.subgraphs.reserve(g.subgraphs.size());
    for (const Graph& sub : g.subgraphs) {
      Stats ss;
      st = stats_one(sub, &ss, err);
      if (st != Status::kOk) return st;
      s.subgraphs.push_back(std::move(ss));
    }
    *out = std::move(s);
    return Status::kOk;
  } catch (const std::bad_alloc&) {
    if (err) *err = "out of memory computing width statistics";
    return Status::kNoMemory;
  } catch (...) {
    if (err) *err = "internal error computing width statistics";
    return Status::kInternal;
  }
}

}  // namespace pw::graph
