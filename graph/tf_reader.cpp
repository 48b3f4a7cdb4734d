// TensorFlow GraphDef and SavedModel -> Graph. Field numbers from tensorflow/core/framework
// and tensorflow/core/protobuf: GraphDef node 1, library 2; NodeDef name 1, op 2, input 3,
// attr 5 (map entry key 1, value 2); AttrValue func 10; NameAttrList name 1;
// FunctionDefLibrary function 1; FunctionDef signature 1, node_def 3, ret 4 (map entry);
// OpDef name 1, input_arg 2, output_arg 3; OpDef.ArgDef name 1; SavedModel meta_graphs 2;
// MetaGraphDef graph_def 2.
//
// Which graph runs (docs/design.md: the graph the session or runtime executes): the main
// graph_def (for a SavedModel, of the first meta graph that has one) with every PartitionedCall /
// StatefulPartitionedCall (attr f) and every direct call of a library function replaced by
// the function's body, recursively, as TF's function inlining does before execution. A TF2
// SavedModel's main graph holds little besides such calls. Each library function is also
// reported on its own as a subgraph; bodies of If/While/Case are reported that way only.
//
// A lone FunctionDef (a TF2 function graph, tf_functiondef_read): its body is the graph;
// each argument becomes a Placeholder (a VarHandleOp for a resource whose variable's shape
// TensorFlow recorded), so shape inference starts from what TF knew when it traced:
// FunctionDef attr 5 (map: "_input_shapes"), arg_attr 7 (map<uint32, ArgAttrs{attr 1}>:
// "_output_shapes"), ArgDef type 3 and handle_data 7 (DtypeAndShape: dtype 1, shape 2).
// Calls to other functions are not inlined (their bodies are not in a lone FunctionDef).
#include <cstring>
#include <unordered_map>

#include "graph/heavy_ops.h"
#include "graph/proto_reader.h"
#include "graph/readers.h"
#include "graph/tf_values.h"

namespace pw::graph {
namespace {

using proto::Field;
using proto::Reader;

using tf_values::Ctx;
using tf_values::tf_attr;
using tf_values::tf_dtype;
using tf_values::tf_shape;

struct TfNode {
  std::string name, op, call;  // call: function named by attr "f" (or op itself)
  std::vector<std::string> inputs;
  std::vector<Attr> attrs;
};

struct TfFunction {
  std::string name;
  std::vector<std::string> args, outs;
  std::unordered_map<std::string, std::string> ret;
  std::vector<TfNode> nodes;
};

using Library = std::unordered_map<std::string, TfFunction>;
// A function argument: the nodes it depends on, and the one value it is (node -1: none).
struct ArgValue {
  std::vector<uint32_t> preds;
  Node::Source src;
};
using ArgMap = std::unordered_map<std::string, ArgValue>;

// "^node", "node:1", "node:output:0": the output index (the last number; 0 when none).
int input_output_index(std::string_view in) {
  size_t colon = in.rfind(':');
  if (colon == std::string_view::npos || in[0] == '^') return 0;
  int v = 0;
  for (size_t i = colon + 1; i < in.size(); ++i) {
    if (in[i] < '0' || in[i] > '9' || v > 100000) return 0;
    v = v * 10 + (in[i] - '0');
  }
  return v;
}

// "^node", "node:1", "node:output:0" -> "node". Control inputs are edges like data inputs.
std::string_view input_node(std::string_view in) {
  if (!in.empty() && in[0] == '^') in.remove_prefix(1);
  size_t colon = in.find(':');
  return colon == std::string_view::npos ? in : in.substr(0, colon);
}

std::string name_attr_list_name(std::string_view bytes, int depth, Ctx* c) {
  std::string name;
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f))
    if (f.number == 1 && f.wire == proto::kLen) name.assign(f.bytes);
  c->check(r, "function attr");
  return name;
}

bool node_def(std::string_view bytes, int depth, TfNode* n, Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.wire != proto::kLen) continue;
    if (f.number == 1) n->name.assign(f.bytes);
    if (f.number == 2) n->op.assign(f.bytes);
    if (f.number == 3) n->inputs.emplace_back(f.bytes);
    if (f.number != 5) continue;
    std::string_view key, value;
    Reader e(f.bytes, depth + 1);
    Field ef;
    while (e.next(&ef)) {
      if (ef.number == 1 && ef.wire == proto::kLen) key = ef.bytes;
      if (ef.number == 2 && ef.wire == proto::kLen) value = ef.bytes;
    }
    if (!c->check(e, "node attr")) return false;
    if (n->attrs.size() < 4096) {
      Attr a;
      a.name.assign(key);
      if (!tf_attr(value, depth + 2, &a, c)) return false;
      n->attrs.push_back(std::move(a));
    }
    if (key != "f") continue;
    Reader v(value, depth + 2);  // AttrValue
    Field vf;
    while (v.next(&vf))
      if (vf.number == 10 && vf.wire == proto::kLen)
        n->call = name_attr_list_name(vf.bytes, depth + 3, c);
    if (!c->check(v, "attr value") || c->status != Status::kOk) return false;
  }
  return c->check(r, "node");
}

bool arg_names(std::string_view bytes, int depth, std::vector<std::string>* names, Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  std::string name;
  while (r.next(&f))
    if (f.number == 1 && f.wire == proto::kLen) name.assign(f.bytes);
  names->push_back(name);
  return c->check(r, "arg");
}

bool function_def(std::string_view bytes, int depth, TfFunction* fn, Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.wire != proto::kLen) continue;
    if (f.number == 1) {  // OpDef signature
      Reader s(f.bytes, depth + 1);
      Field sf;
      while (s.next(&sf)) {
        if (sf.wire != proto::kLen) continue;
        if (sf.number == 1) fn->name.assign(sf.bytes);
        if (sf.number == 2 && !arg_names(sf.bytes, depth + 2, &fn->args, c)) return false;
        if (sf.number == 3 && !arg_names(sf.bytes, depth + 2, &fn->outs, c)) return false;
      }
      if (!c->check(s, "function signature")) return false;
    } else if (f.number == 3) {
      fn->nodes.emplace_back();
      if (!node_def(f.bytes, depth + 1, &fn->nodes.back(), c)) return false;
    } else if (f.number == 4) {
      std::string key, value;
      Reader e(f.bytes, depth + 1);
      Field ef;
      while (e.next(&ef)) {
        if (ef.number == 1 && ef.wire == proto::kLen) key.assign(ef.bytes);
        if (ef.number == 2 && ef.wire == proto::kLen) value.assign(ef.bytes);
      }
      if (!c->check(e, "function ret")) return false;
      fn->ret[key] = value;
    }
  }
  return c->check(r, "function");
}

bool graph_def(std::string_view bytes, int depth, std::vector<TfNode>* nodes, Library* lib,
               Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.number == 1) {
      if (f.wire != proto::kLen) return c->bad("GraphDef node field has wrong wire type");
      if (nodes->size() >= kMaxNodes) return c->bad("too many nodes", Status::kTooLarge);
      nodes->emplace_back();
      if (!node_def(f.bytes, depth + 1, &nodes->back(), c)) return false;
    } else if (f.number == 2 && f.wire == proto::kLen) {
      Reader l(f.bytes, depth + 1);
      Field lf;
      while (l.next(&lf)) {
        if (lf.number != 1 || lf.wire != proto::kLen) continue;
        TfFunction fn;
        if (!function_def(lf.bytes, depth + 2, &fn, c)) return false;
        std::string key = fn.name;
        (*lib)[key] = std::move(fn);
      }
      if (!c->check(l, "function library")) return false;
    }
  }
  return c->check(r, "graph");
}

// Appends nodes to a Graph, inlining calls to library functions.
class Emitter {
 public:
  Emitter(const Library& lib, Graph* g, Ctx* c) : lib_(lib), g_(g), c_(c) {}

  bool emit(const std::vector<TfNode>& nodes, const std::string& prefix, const ArgMap* args,
            int depth, std::unordered_map<std::string, uint32_t>* local) {
    const size_t base = g_->nodes.size();
    if (nodes.size() > kMaxNodes - base)
      return c_->bad("graph too large after inlining", Status::kTooLarge);
    local->reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) local->emplace(nodes[i].name, uint32_t(base + i));
    for (const TfNode& t : nodes) {
      Node n;
      n.name = prefix + t.name;
      n.op = t.op;
      n.inputs = t.inputs;
      n.attrs = t.attrs;
      g_->nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const TfNode& t = nodes[i];
      std::vector<ArgValue> data;  // producers of each data input
      std::vector<uint32_t> preds;
      std::vector<Node::Source> sources;
      for (const std::string& in : t.inputs) {
        ArgValue v = resolve(input_node(in), *local, args, input_output_index(in));
        preds.insert(preds.end(), v.preds.begin(), v.preds.end());
        const bool control = !in.empty() && in[0] == '^';
        sources.push_back(control ? Node::Source{-1, -1} : v.src);
        if (!control) data.push_back(std::move(v));
      }
      Node& n = g_->nodes[base + i];
      n.sources = std::move(sources);
      if (!data.empty() && data[0].preds.size() == 1) n.operand0 = data[0].preds[0];
      n.preds = std::move(preds);
      const std::string& callee = t.call.empty() ? t.op : t.call;
      auto it = lib_.find(callee);
      if (it == lib_.end()) continue;
      if (depth >= kMaxInlineDepth) {
        capped_ = true;
        continue;
      }
      const TfFunction& fn = it->second;
      ArgMap callee_args;
      for (size_t k = 0; k < fn.args.size() && k < data.size(); ++k)
        callee_args[fn.args[k]] = data[k];
      std::unordered_map<std::string, uint32_t> callee_local;
      if (!emit(fn.nodes, g_->nodes[base + i].name + "/", &callee_args, depth + 1, &callee_local))
        return false;
      // The call node stays as the point where the body's results come together.
      for (const std::string& out : fn.outs) {
        auto r = fn.ret.find(out);
        if (r == fn.ret.end()) continue;
        for (uint32_t p : resolve(input_node(r->second), callee_local, &callee_args, 0).preds)
          g_->nodes[base + i].preds.push_back(p);
      }
    }
    return true;
  }

  bool capped() const { return capped_; }

 private:
  static ArgValue resolve(std::string_view name,
                          const std::unordered_map<std::string, uint32_t>& local,
                          const ArgMap* args, int output) {
    std::string key(name);
    auto it = local.find(key);
    if (it != local.end()) return {{it->second}, {int64_t(it->second), output}};
    if (args) {
      auto a = args->find(key);
      if (a != args->end()) return a->second;
    }
    return {};  // a feed or an unknown name: no edge
  }

  const Library& lib_;
  Graph* g_;
  Ctx* c_;
  bool capped_ = false;
};

void classify(Graph* g) {
  for (Node& n : g->nodes) {
    const HeavyOp* h = heavy_op_find(Framework::kTf, n.op);
    if (!h) continue;
    if (h->rule == HeavyRule::kAlways) {
      n.heavy = true;
      continue;
    }
    // Gather params: a constant or variable, possibly behind Identity ops (frozen graphs
    // put "x/read" Identity nodes after variables).
    int64_t p = n.operand0;
    for (int hops = 0; p >= 0 && hops < 64; ++hops) {
      const Node& src = g->nodes[static_cast<size_t>(p)];
      if (src.op != "Identity" && src.op != "StopGradient") break;
      p = src.operand0;
    }
    n.heavy = p >= 0 && tf_is_param_source(g->nodes[static_cast<size_t>(p)].op);
  }
}

// One argument of a lone FunctionDef, and what TF recorded about its shape.
struct FnArg {
  std::string name;
  int64_t type = 0;  // TF DataType
  bool shaped = false;
  std::vector<int64_t> dims;
  bool handle = false;  // a resource whose variable's dtype and shape are known
  int64_t handle_type = 0;
  std::vector<int64_t> handle_dims;
};

constexpr int64_t kTfResource = 20;  // DT_RESOURCE

// A resource's variable, its dtype and shape, from one of the two messages TF records it
// in (ArgDef's handle_data: dtype 1, shape 2; HandleShapeAndType: shape 1, dtype 2). Sets
// a's handle when the shape is known; false with c's status on a malformed message.
bool fn_handle_entry(std::string_view bytes, int depth, uint32_t dtype_field, uint32_t shape_field,
                     const char* what, FnArg* a, Ctx* c) {
  Reader h(bytes, depth);
  Field hf;
  int64_t t = 0;
  bool known = false;
  std::vector<int64_t> dims;
  while (h.next(&hf)) {
    if (hf.number == dtype_field && hf.wire == proto::kVarint) t = static_cast<int64_t>(hf.varint);
    if (hf.number == shape_field && hf.wire == proto::kLen) {
      dims.clear();
      known = tf_shape(hf.bytes, depth + 1, &dims, c);
      if (c->status != Status::kOk) return false;
    }
  }
  if (!c->check(h, what)) return false;
  if (known) a->handle = true, a->handle_type = t, a->handle_dims = std::move(dims);
  return true;
}

bool fn_arg_def(std::string_view bytes, int depth, FnArg* a, Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.number == 1 && f.wire == proto::kLen) a->name.assign(f.bytes);
    if (f.number == 3 && f.wire == proto::kVarint) a->type = static_cast<int64_t>(f.varint);
    if (f.number != 7 || f.wire != proto::kLen || a->handle) continue;
    if (!fn_handle_entry(f.bytes, depth + 1, 1, 2, "arg handle data", a, c)) return false;
  }
  return c->check(r, "arg");
}

// CppShapeInferenceResult.HandleData (is_set 1, shape_and_type 2: HandleShapeAndType
// shape 1, dtype 2), TF's record of a resource's variable on the graph a function came
// from: the first entry whose shape is known.
bool fn_handle_data(std::string_view bytes, FnArg* a, Ctx* c) {
  Reader r(bytes, 1);
  Field f;
  while (r.next(&f)) {
    if (f.number != 2 || f.wire != proto::kLen || a->handle) continue;
    if (!fn_handle_entry(f.bytes, 2, 2, 1, "handle shape and type", a, c)) return false;
  }
  return c->check(r, "handle data");
}

// A map<string, AttrValue> entry: the attribute named `want` into *a (false: absent).
bool fn_attr_entry(std::string_view bytes, int depth, const char* want, Attr* a, Ctx* c) {
  std::string_view key, value;
  Reader e(bytes, depth);
  Field ef;
  while (e.next(&ef)) {
    if (ef.number == 1 && ef.wire == proto::kLen) key = ef.bytes;
    if (ef.number == 2 && ef.wire == proto::kLen) value = ef.bytes;
  }
  if (!c->check(e, "function attr") || key != want) return false;
  return tf_attr(value, depth + 1, a, c);
}

// The first shape of a list(shape) attribute, when its rank is known.
bool first_shape(const Attr& a, std::vector<int64_t>* dims) {
  if (a.kind != Attr::Kind::kShapes || a.shapes.empty() || a.shapes[0].rank < 0) return false;
  *dims = a.shapes[0].dims;
  return true;
}

bool lone_function(std::string_view bytes, TfFunction* fn, std::vector<FnArg>* args, Ctx* c) {
  if (!function_def(bytes, 0, fn, c)) return false;
  Attr input_shapes;
  std::vector<std::pair<uint64_t, std::vector<int64_t>>> arg_shapes;
  Reader r(bytes, 0);
  Field f;
  while (r.next(&f)) {
    if (f.wire != proto::kLen) continue;
    if (f.number == 1) {
      Reader s(f.bytes, 1);
      Field sf;
      while (s.next(&sf)) {
        if (sf.number != 2 || sf.wire != proto::kLen) continue;
        if (args->size() >= kMaxNodes) return c->bad("too many arguments", Status::kTooLarge);
        args->emplace_back();
        if (!fn_arg_def(sf.bytes, 2, &args->back(), c)) return false;
      }
      if (!c->check(s, "function signature")) return false;
    } else if (f.number == 5) {
      Attr a;
      if (fn_attr_entry(f.bytes, 1, "_input_shapes", &a, c)) input_shapes = std::move(a);
      if (c->status != Status::kOk) return false;
    } else if (f.number == 7) {
      uint64_t index = 0;
      std::string_view attrs;
      Reader e(f.bytes, 1);
      Field ef;
      while (e.next(&ef)) {
        if (ef.number == 1 && ef.wire == proto::kVarint) index = ef.varint;
        if (ef.number == 2 && ef.wire == proto::kLen) attrs = ef.bytes;
      }
      if (!c->check(e, "arg attr")) return false;
      Reader aa(attrs, 2);
      Field af;
      while (aa.next(&af)) {
        if (af.number != 1 || af.wire != proto::kLen) continue;
        Attr a;
        std::vector<int64_t> dims;
        if (fn_attr_entry(af.bytes, 3, "_output_shapes", &a, c) && first_shape(a, &dims))
          arg_shapes.emplace_back(index, std::move(dims));
        if (c->status != Status::kOk) return false;
      }
      if (!c->check(aa, "arg attrs")) return false;
    }
  }
  if (!c->check(r, "function")) return false;
  if (input_shapes.kind == Attr::Kind::kShapes)
    for (size_t i = 0; i < args->size() && i < input_shapes.shapes.size(); ++i)
      if (input_shapes.shapes[i].rank >= 0)
        (*args)[i].shaped = true, (*args)[i].dims = input_shapes.shapes[i].dims;
  for (auto& [index, dims] : arg_shapes)  // the argument's own record wins
    if (index < args->size()) (*args)[index].shaped = true, (*args)[index].dims = dims;
  return true;
}

TfNode arg_node(const FnArg& a) {
  TfNode n;
  n.name = a.name;
  const bool var = a.type == kTfResource && a.handle;
  n.op = var ? "VarHandleOp" : "Placeholder";
  Attr dtype;
  dtype.name = "dtype";
  dtype.kind = Attr::Kind::kInt;
  dtype.i = static_cast<int64_t>(tf_dtype(var ? a.handle_type : a.type));
  n.attrs.push_back(dtype);
  if (var || (a.shaped && a.type != kTfResource)) {
    Attr shape;
    shape.name = "shape";
    shape.kind = Attr::Kind::kInts;
    shape.ints = var ? a.handle_dims : a.dims;
    n.attrs.push_back(std::move(shape));
  }
  return n;
}

Status build(std::vector<TfNode>& main, Library& lib, Format format, Graph* out, Ctx* c) {
  Graph g;
  g.format = format;
  g.path = out->path;
  g.name = "main";
  Emitter em(lib, &g, c);
  std::unordered_map<std::string, uint32_t> local;
  if (!em.emit(main, "", nullptr, 0, &local)) return c->status;
  classify(&g);
  for (const Node& n : g.nodes)
    if (n.op == "Placeholder" || n.op == "PlaceholderWithDefault") g.inputs.push_back(n.name);
  g.note = "main graph with function calls inlined";
  if (em.capped()) g.note += " (inlining stopped at depth " + std::to_string(kMaxInlineDepth) + ")";
  for (auto& [name, fn] : lib) {
    Graph sub;
    sub.format = format;
    sub.path = out->path;
    sub.name = name;
    Emitter se(lib, &sub, c);
    std::unordered_map<std::string, uint32_t> sl;
    if (!se.emit(fn.nodes, "", nullptr, 1, &sl)) return c->status;
    classify(&sub);
    g.subgraphs.push_back(std::move(sub));
  }
  if (g.nodes.empty()) return c->bad("the graph has no nodes"), c->status;
  *out = std::move(g);
  return Status::kOk;
}

}  // namespace

Status tf_functiondef_read(std::string_view bytes, const std::vector<std::string>& arg_handles,
                           Graph* out, std::string* err) {
  Ctx c{err};
  TfFunction fn;
  std::vector<FnArg> args;
  if (!lone_function(bytes, &fn, &args, &c)) return c.status;
  // Handle data that does not read leaves its argument as the FunctionDef has it; a list
  // for another number of arguments belongs to another function and is not used.
  for (size_t i = 0; i < args.size() && arg_handles.size() == args.size(); ++i) {
    if (args[i].type != kTfResource || args[i].handle || arg_handles[i].empty()) continue;
    std::string ignored;
    Ctx hc{&ignored};
    FnArg read = args[i];
    if (fn_handle_data(arg_handles[i], &read, &hc)) args[i] = std::move(read);
  }
  if (fn.name.empty()) return c.bad("a FunctionDef without a name"), c.status;
  if (fn.nodes.size() > kMaxNodes - args.size())
    return c.bad("too many nodes", Status::kTooLarge), c.status;
  std::vector<TfNode> body;
  body.reserve(args.size() + fn.nodes.size());
  for (const FnArg& a : args) body.push_back(arg_node(a));
  for (TfNode& n : fn.nodes) body.push_back(std::move(n));
  Library none;
  Graph g;
  g.path = out->path;
  Status s = build(body, none, Format::kTfFunctionDef, &g, &c);
  if (s != Status::kOk) return s;
  g.name = fn.name;
  g.note = "function graph " + fn.name;
  *out = std::move(g);
  return Status::kOk;
}

Status tf_graphdef_read(std::string_view bytes, Graph* out, std::string* err) {
  Ctx c{err};
  std::vector<TfNode> main;
  Library lib;
  if (!graph_def(bytes, 0, &main, &lib, &c)) return c.status;
  return build(main, lib, Format::kTfGraphDef, out, &c);
}

Status tf_savedmodel_read(std::string_view bytes, Graph* out, std::string* err) {
  Ctx c{err};
  std::string_view graph_bytes;
  bool found = false;
  Reader r(bytes, 0);
  Field f;
  while (r.next(&f) && !found) {
    if (f.number == 1 && f.wire != proto::kVarint) return c.bad("not a SavedModel"), c.status;
    if (f.number != 2) continue;
    if (f.wire != proto::kLen) return c.bad("not a SavedModel"), c.status;
    Reader m(f.bytes, 1);  // MetaGraphDef: the first one that has a graph_def
    Field mf;
    while (m.next(&mf))
      if (mf.number == 2 && mf.wire == proto::kLen) graph_bytes = mf.bytes, found = true;
    if (!c.check(m, "meta graph")) return c.status;
  }
  if (!c.check(r, "saved model")) return c.status;
  if (!found) return c.bad("SavedModel without a graph_def"), c.status;
  std::vector<TfNode> main;
  Library lib;
  if (!graph_def(graph_bytes, 2, &main, &lib, &c)) return c.status;
  return build(main, lib, Format::kTfSavedModel, out, &c);
}

}  // namespace pw::graph
