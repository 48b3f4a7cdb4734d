// shapes_infer: walks a graph in topological order, applies the per-operator rules of
// shapes_onnx*.cpp / shapes_tf*.cpp and the costs of costs.cpp. Iterative (the one recursion,
// update_shape's, stops at depth 12), O(nodes + edges) per pass plus the bounded work of each
// rule; a lone FunctionDef takes up to 10 passes.
#include <algorithm>
#include <map>
#include <new>
#include <set>
#include <unordered_map>

#include "graph/shapes_ops.h"

namespace pw::graph {
namespace {

using shape::TI;

// TF ops that have no shape meaning for costs (checkpointing, control, function calls: in
// a GraphDef their bodies are inlined next to them, in a lone FunctionDef they are other
// graphs): no rule, and no warning either.
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
  // Optimizers' updates of variables: they return nothing that is computed on.
  for (const char* prefix : {"ResourceApply", "ResourceSparseApply", "ResourceScatter"})
    if (op.rfind(prefix, 0) == 0) return true;
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

// "node:arg:i" names output i of the producer's output argument `arg` (FunctionDef bodies);
// for ops with several single-tensor output arguments the flat index is arg's position
// plus i. Ops whose outputs are one list (IdentityN's "output", ConcatOffset's "offset")
// are flat already. -1: not a named output of a known op.
int tf_named_output(const std::string& op, const std::string& in) {
  const size_t first = in.find(':'), last = in.rfind(':');
  if (first == std::string::npos || first == last) return -1;
  const std::string arg = in.substr(first + 1, last - first - 1);
  static const std::map<std::string, std::vector<std::string>> outs = {
      {"SparseSoftmaxCrossEntropyWithLogits", {"loss", "backprop"}},
      {"SoftmaxCrossEntropyWithLogits", {"loss", "backprop"}},
      {"FusedBatchNorm",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2",
        "reserve_space_3"}},
      {"FusedBatchNormGrad",
       {"x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3", "reserve_space_4"}},
      {"FusedBatchNormGradV2",
       {"x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3", "reserve_space_4"}},
      {"FusedBatchNormGradV3",
       {"x_backprop", "scale_backprop", "offset_backprop", "reserve_space_4", "reserve_space_5"}},
      {"BroadcastGradientArgs", {"r0", "r1"}},
      {"Unique", {"y", "idx"}},
      {"TopKV2", {"values", "indices"}}};
  auto it = outs.find(op);
  if (it == outs.end()) return -1;
  int i = 0;
  for (size_t k = last + 1; k < in.size(); ++k) {
    if (in[k] < '0' || in[k] > '9' || i > 1000) return -1;
    i = i * 10 + (in[k] - '0');
  }
  for (size_t k = 0; k < it->second.size(); ++k)
    if (it->second[k] == arg) return int(k) + i;
  return -1;
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
      if (tf && src >= 0 && size_t(src) < n) {
        const int by_arg = tf_named_output(g->nodes[size_t(src)].op, name);
        if (by_arg >= 0) idx = by_arg;
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

// --- TF function graphs: the variables behind resource arguments -------------------------
// A lone FunctionDef's resource argument has no shape unless TF recorded handle data
// (tf_reader.cpp makes it a VarHandleOp then); the train steps that Keras traces record
// none, so every MatMul on a weight would stay unknown. A training step updates each of
// its variables, though, and TF requires the update to have the variable's shape:
// Assign{,Add,Sub}VariableOp(var, value) and ResourceApply*(var, ..., grad). So a
// variable's shape is learned from the value it is updated with, found through the
// element-wise ops that build it (var - lr * grad: the scalar lr, itself a variable of
// unknown shape here, broadcasts away), and inference runs again; what is learned then
// can tell the next variable (the head's gradient needs the branches' shapes).

using ByName = std::unordered_map<std::string, uint32_t>;

// The producer of node's input k and its output index; -1 when none or a control input.
int64_t tf_source(const Graph& g, const ByName& by_name, const Node& node, size_t k, int* idx) {
  const std::string& in = node.inputs[k];
  if (in.empty() || in[0] == '^') return -1;
  int64_t src = -1;
  *idx = 0;
  if (node.sources.size() == node.inputs.size()) {
    src = node.sources[k].node, *idx = node.sources[k].output;
  } else {
    auto [nm, i] = tf_split(in);
    auto it = by_name.find(nm);
    if (it != by_name.end()) src = it->second, *idx = i;
  }
  if (src < 0 || size_t(src) >= g.nodes.size()) return -1;
  const int named = tf_named_output(g.nodes[size_t(src)].op, in);
  if (named >= 0) *idx = named;
  return src;
}

int known_dims(const TI& t) {
  if (t.rank < 0) return -1;
  int c = 0;
  for (int64_t d : t.dims) c += d >= 0;
  return c;
}

// The shape of output idx of node v as an update value: what inference found, else the
// broadcast of the element-wise operands whose rank is known.
TI update_shape(const Graph& g, const ByName& by_name, uint32_t v, int idx, int depth) {
  static const std::set<std::string> elementwise = {
      "Mul",      "AddV2",   "Add",     "Sub",  "RealDiv",           "Div",  "DivNoNan",
      "MulNoNan", "Maximum", "Minimum", "Pow",  "SquaredDifference", "Neg",  "Identity",
      "Sqrt",     "Square",  "Rsqrt",   "Cast", "StopGradient",      "Sign", "Abs"};
  const Node& n = g.nodes[v];
  TI t = idx >= 0 && size_t(idx) < n.out.size() ? n.out[size_t(idx)] : TI{};
  if (t.known() || depth > 12) return t;
  TI r;
  bool any = false;
  if (n.op == "IdentityN") {
    int j = 0;
    const int64_t u =
        size_t(idx) < n.inputs.size() ? tf_source(g, by_name, n, size_t(idx), &j) : -1;
    if (u >= 0) r = update_shape(g, by_name, uint32_t(u), j, depth + 1), any = r.rank >= 0;
  } else if (elementwise.count(n.op) && idx == 0) {
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      int j = 0;
      const int64_t u = tf_source(g, by_name, n, k, &j);
      if (u < 0) continue;
      const TI o = update_shape(g, by_name, uint32_t(u), j, depth + 1);
      if (o.rank < 0) continue;
      r = any ? shape::broadcast(r, o) : o;
      any = true;
    }
  }
  if (any && known_dims(r) > known_dims(t)) t = r;
  return t;
}

// One round: the resource arguments (Placeholders without a shape) whose update value's
// shape is known, fully (partial false) or in rank (partial: unknown dims taken as 1, as
// for a graph input). They become VarHandleOps of that shape. Returns how many.
size_t tf_variables_learn(Graph* g, bool partial, Run* run) {
  ByName by_name;
  for (size_t i = 0; i < g->nodes.size(); ++i) by_name.emplace(g->nodes[i].name, uint32_t(i));
  auto unshaped = [&](int64_t u) {  // and not given by the user (--input-shape NAME=...)
    const Node& p = g->nodes[size_t(u)];
    return p.op == "Placeholder" && !p.attr("shape") && !run->given.count(p.name) &&
           !run->given.count(p.name + ":0");
  };
  std::map<uint32_t, TI> found;
  for (const Node& node : g->nodes) {
    const bool assign = node.op == "AssignVariableOp" || node.op == "AssignAddVariableOp" ||
                        node.op == "AssignSubVariableOp";
    const bool apply = node.op.rfind("ResourceApply", 0) == 0;
    // ResourceScatter{Add,Sub,Update,...}(var, indices, updates): a sparse update (an
    // embedding's gradient) tells the rows' shape, updates' dims after the indices' own;
    // the row count stays unknown.
    const bool scatter =
        node.op.rfind("ResourceScatter", 0) == 0 && node.op.rfind("ResourceScatterNd", 0) != 0;
    if (!assign && !apply && !scatter) continue;
    size_t value_k = assign ? 1 : scatter ? 2 : node.inputs.size();
    // The last data input: the gradient (delta) in most ResourceApply* ops, but a scalar
    // hyperparameter in *Momentum (momentum) and *Ftrl* (lr_power).
    if (apply)
      for (size_t k = 0; k < node.inputs.size(); ++k)
        if (!node.inputs[k].empty() && node.inputs[k][0] != '^') value_k = k;
    if (value_k >= node.inputs.size()) continue;
    int j = 0;
    const int64_t val = tf_source(*g, by_name, node, value_k, &j);
    if (val < 0) continue;
    TI t = update_shape(*g, by_name, uint32_t(val), j, 0);
    if (scatter) {
      int ji = 0;
      const int64_t ind = tf_source(*g, by_name, node, 1, &ji);
      const Node* in = ind >= 0 ? &g->nodes[size_t(ind)] : nullptr;
      const int r = in && ji >= 0 && size_t(ji) < in->out.size() ? in->out[size_t(ji)].rank : -1;
      if (r < 0 || t.rank < r) continue;
      std::vector<int64_t> rows = {-1};
      rows.insert(rows.end(), t.dims.begin() + r, t.dims.end());
      t = shape::of_dims(rows, t.dtype);
    }
    if (t.rank < 0 || (!partial && !t.known())) continue;
    for (size_t k = 0; k < (apply ? value_k : 1); ++k) {
      int jj = 0;
      const int64_t var = tf_source(*g, by_name, node, k, &jj);
      if (var >= 0 && unshaped(var) && !found.count(uint32_t(var))) found[uint32_t(var)] = t;
    }
  }
  for (auto& [v, t] : found) {
    Node& p = g->nodes[v];
    std::string dims;
    bool guessed = false;
    for (int64_t& d : t.dims) {
      if (d < 0) d = 1, guessed = true;
      dims += (dims.empty() ? "" : "x") + std::to_string(d);
    }
    p.op = "VarHandleOp";
    Attr shape;
    shape.name = "shape";
    shape.kind = Attr::Kind::kInts;
    shape.ints = t.dims;
    p.attrs.push_back(std::move(shape));
    bool typed = false;
    for (Attr& a : p.attrs)
      if (a.name == "dtype") a.kind = Attr::Kind::kInt, a.i = int64_t(t.dtype), typed = true;
    if (!typed) {
      Attr dtype;
      dtype.name = "dtype";
      dtype.kind = Attr::Kind::kInt;
      dtype.i = int64_t(t.dtype);
      p.attrs.push_back(std::move(dtype));
    }
    if (guessed)
      run->warn("shapes: variable '" + p.name +
                "' of the function: its updates give only part of its shape; taken as " + dims +
                " (unknown dims as 1)");
  }
  return found.size();
}

}  // namespace

Status shapes_infer(Graph* g, const InputShapes& given, std::vector<std::string>* warnings,
                    std::string* err) {
  try {
    Run run{given, warnings, {}, {}};
    if (g->format == Format::kTfFunctionDef) {
      // Rounds that learn the variables' shapes (above), quietly; then the inference
      // that counts, with its warnings.
      Run scratch{given, nullptr, {}, {}};
      graph_infer(g, &scratch, true);
      for (int round = 0; round < 8; ++round) {
        if (!tf_variables_learn(g, false, &run) && !tf_variables_learn(g, true, &run)) break;
        graph_infer(g, &scratch, true);
      }
    }
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
