// shapes_infer: walks a graph in topological order, applies the per-operator rules of
// shapes_onnx.cpp / shapes_tf.cpp and the costs of costs.cpp. Iterative (no recursion over
// nodes), O(nodes + edges) plus the bounded work of each rule.
#include <algorithm>
#include <map>
#include <new>
#include <set>
#include <unordered_map>

#include "graph/shapes_ops.h"

namespace pw::graph {
namespace {

using shape::TI;

// TF ops that have no shape meaning for costs (checkpointing, control, function calls whose
// bodies are inlined next to them): no rule, and no warning either.
bool tf_quiet(const std::string& op) {
  static const std::set<std::string> s = {"NoOp",
                                          "SaveV2",
                                          "RestoreV2",
                                          "MergeV2Checkpoints",
                                          "ShardedFilename",
                                          "StringJoin",
                                          "AssignVariableOp",
                                          "VarIsInitializedOp",
                                          "StatefulPartitionedCall",
                                          "PartitionedCall",
                                          "Assert",
                                          "PrintV2",
                                          "Print",
                                          "StaticRegexFullMatch",
                                          "_Arg",
                                          "_Retval",
                                          "Assign",
                                          "RestoreSlice",
                                          "SaveSlices",
                                          "Save",
                                          "Restore",
                                          "AssignAdd",
                                          "AssignSub",
                                          "AssignAddVariableOp",
                                          "AssignSubVariableOp",
                                          "DestroyResourceOp",
                                          "DisableCopyOnRead"};
  return s.count(op) > 0;
}

struct Run {
  const InputShapes& given;
  std::vector<std::string>* warnings;
  std::map<std::string, uint64_t> unknown_ops;  // op type -> nodes
  std::set<std::string> used_given;

  void warn(std::string w) {
    if (warnings) warnings->push_back(std::move(w));
  }
};

// A graph input's shape: given by the user, else the file's with unknown dims taken as 1.
void input_resolve(const std::string& name, TI* t, Run* run, bool top) {
  auto it = run->given.find(name);
  if (it == run->given.end() && (name.size() < 2 || name.compare(name.size() - 2, 2, ":0") != 0))
    it = run->given.find(name + ":0");
  if (it != run->given.end()) {
    run->used_given.insert(it->first);
    const DType d = t->dtype;
    *t = shape::of_dims(it->second, d);
    return;
  }
  if (!top) return;
  if (t->rank < 0) {
    run->warn("shapes: input '" + name +
              "' has no shape in the model: what depends on it is unknown (give "
              "--input-shape " +
              name + "=DxDx... or PARWIDTH_INPUT_SHAPES)");
    return;
  }
  std::string which;
  for (size_t i = 0; i < t->dims.size(); ++i) {
    if (shape::dim_ok(t->dims[i])) continue;
    t->dims[i] = 1;
    which += (which.empty() ? "" : ",") + std::to_string(i);
  }
  if (!which.empty())
    run->warn("shapes: input '" + name + "' dim " + which +
              " is symbolic or unknown: taken as 1 (give --input-shape " + name +
              "=DxDx... or PARWIDTH_INPUT_SHAPES)");
}

// "^node" / "node" / "node:1" / "node:output:0" (TF) -> node name and output index.
std::pair<std::string, int> tf_split(const std::string& in) {
  std::string s = !in.empty() && in[0] == '^' ? in.substr(1) : in;
  const size_t first = s.find(':');
  if (first == std::string::npos) return {s, 0};
  const size_t last = s.rfind(':');
  int idx = 0;
  for (size_t i = last + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || idx > 100000) return {s.substr(0, first), 0};
    idx = idx * 10 + (s[i] - '0');
  }
  return {s.substr(0, first), idx};
}

void graph_infer(Graph* g, Run* run, bool top) {
  const bool tf = format_is_tf(g->format);
  if (g->format == Format::kJson) return;  // JSON carries its own flops and shapes
  const size_t n = g->nodes.size();

  // Values that no node produces: initializers, graph inputs (ONNX).
  std::unordered_map<std::string, TI> named;
  for (const auto& [name, t] : g->tensors)
    if (t.constant) named[name] = t;
  for (const std::string& in : g->inputs) {
    if (tf) continue;  // TF inputs are Placeholder nodes
    TI t = g->tensors.count(in) ? g->tensors.at(in) : TI{};
    input_resolve(in, &t, run, top);
    named[in] = std::move(t);
  }
  std::unordered_map<std::string, std::pair<uint32_t, int>> producer;  // tensor -> node, output
  std::unordered_map<std::string, uint32_t> by_name;                   // TF node names
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g->nodes[i];
    if (tf)
      by_name.emplace(node.name, uint32_t(i));
    else
      for (size_t k = 0; k < node.outputs.size(); ++k)
        if (!node.outputs[k].empty())
          producer.emplace(node.outputs[k], std::make_pair(uint32_t(i), int(k)));
  }

  // Kahn's order over preds; nodes on a cycle go last, in file order, with what is known.
  std::vector<uint32_t> indeg(n, 0), order;
  std::vector<std::vector<uint32_t>> succ(n);
  for (size_t v = 0; v < n; ++v)
    for (uint32_t u : g->nodes[v].preds)
      if (u < n) succ[u].push_back(uint32_t(v)), ++indeg[v];
  order.reserve(n);
  for (size_t v = 0; v < n; ++v)
    if (!indeg[v]) order.push_back(uint32_t(v));
  for (size_t h = 0; h < order.size(); ++h)
    for (uint32_t w : succ[order[h]])
      if (--indeg[w] == 0) order.push_back(w);
  if (order.size() < n) {
    std::vector<bool> seen(n, false);
    for (uint32_t v : order) seen[v] = true;
    for (size_t v = 0; v < n; ++v)
      if (!seen[v]) order.push_back(uint32_t(v));
  }
  std::vector<bool> done(n, false);

  std::vector<TI> in, out;
  for (uint32_t v : order) {
    Node& node = g->nodes[v];
    in.assign(node.inputs.size(), TI{});
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const std::string& name = node.inputs[k];
      if (name.empty() || name[0] == '^') continue;
      int64_t src = -1;
      int idx = 0;
      if (tf) {
        if (node.sources.size() == node.inputs.size()) {
          src = node.sources[k].node, idx = node.sources[k].output;
        } else {
          auto [nm, i] = tf_split(name);
          auto it = by_name.find(nm);
          if (it != by_name.end()) src = it->second, idx = i;
        }
      } else {
        auto it = producer.find(name);
        if (it != producer.end()) {
          src = it->second.first, idx = it->second.second;
        } else {
          auto c = named.find(name);
          if (c != named.end()) in[k] = c->second;
        }
      }
      if (src >= 0 && size_t(src) < n && done[size_t(src)] && idx >= 0 &&
          size_t(idx) < g->nodes[size_t(src)].out.size())
        in[k] = g->nodes[size_t(src)].out[size_t(idx)];
    }
    shape::Args args{node, in};
    const bool ok = tf ? shape::tf_infer(args, &out) : shape::onnx_infer(args, &out);
    if (!ok) {
      out.assign(std::max<size_t>(tf ? 1 : node.outputs.size(), 1), TI{});
      if (!(tf && tf_quiet(node.op))) ++run->unknown_ops[node.op];
    }
    if (tf && (node.op == "Placeholder" || node.op == "PlaceholderWithDefault") && !out.empty())
      input_resolve(node.name, &out[0], run, top);
    // What the file says about an output is used where the rules could not tell.
    for (size_t k = 0; k < out.size(); ++k) {
      if (out[k].known()) continue;
      if (tf) {
        const Attr* os = node.attr("_output_shapes");
        if (os && os->kind == Attr::Kind::kShapes && k < os->shapes.size() &&
            os->shapes[k].known()) {
          const DType d = out[k].dtype;
          out[k] = shape::of_dims(os->shapes[k].dims, d);
        }
      } else if (k < node.outputs.size()) {
        auto it = g->tensors.find(node.outputs[k]);
        if (it != g->tensors.end() && it->second.known() && !it->second.constant) {
          const DType d = out[k].dtype != DType::kUnknown ? out[k].dtype : it->second.dtype;
          out[k] = shape::of_dims(it->second.dims, d);
        }
      }
    }
    if (tf) {
      node.outputs.clear();
      for (size_t k = 0; k < out.size(); ++k)
        node.outputs.push_back(node.name + ":" + std::to_string(k));
    }
    node.out = out;
    node.shape = !out.empty() && out[0].rank >= 0 ? out[0].dims : std::vector<int64_t>{};
    if (ok) {
      node_cost(node, g->format, in, &node.flops, &node.bytes);
    } else {
      node.flops = -1;
      node.bytes = -1;
    }
    done[v] = true;
  }
}

}  // namespace

Status shapes_infer(Graph* g, const InputShapes& given, std::vector<std::string>* warnings,
                    std::string* err) {
  try {
    Run run{given, warnings, {}, {}};
    graph_infer(g, &run, true);
    for (Graph& sub : g->subgraphs) graph_infer(&sub, &run, false);
    for (const auto& [op, count] : run.unknown_ops)
      run.warn("shapes: no shape rule for op '" + op + "' (" + std::to_string(count) +
               (count == 1 ? " node" : " nodes") +
               "): its outputs and what depends on them are unknown; it costs the default "
               "(FLOPs unknown: 0 in work and span)");
    std::string names;
    for (const std::string& in : g->inputs)
      if (names.size() < 400) names += (names.empty() ? "" : ", ") + in;
    for (const auto& [name, dims] : given)
      if (!run.used_given.count(name))
        run.warn("shapes: --input-shape names '" + name + "', which is no input of the model (" +
                 (names.empty() ? std::string("it has none") : "inputs: " + names) + ")");
    return Status::kOk;
  } catch (const std::bad_alloc&) {
    if (err) *err = "out of memory inferring shapes";
    return Status::kNoMemory;
  } catch (...) {
    if (err) *err = "internal error inferring shapes";
    return Status::kInternal;
  }
}

}  // namespace pw::graph
