// Our JSON edge-list format -> Graph. Schema (graph/README.md):
//   {"name": str?, "framework": "onnx"|"tf"?, "constants": [str]?,
//    "nodes": [{"name": str, "op": str, "inputs": [str]?, "heavy": bool?,
//               "flops": number?, "shape": [int]?}],
//    "subgraphs": [{"name": str, "nodes": [...]}]?}
// Inputs name nodes; "^x" is a control edge, "x:1" means node x (when no node is called
// "x:1"); a name that is no node is a graph input. Without "heavy", the op is looked up in
// the heavy-op table of "framework" (both tables when absent).
#include <unordered_map>
#include <unordered_set>

#include "graph/heavy_ops.h"
#include "graph/json_value.h"
#include "graph/readers.h"

namespace pw::graph {
namespace {

bool is_const_op(const std::string& op) {
  return op == "Constant" || tf_is_param_source(op);
}

Status nodes_read(const json::Value& root, const std::unordered_set<std::string>& constants,
                  const std::string& framework, Graph* g, std::string* err) {
  const json::Value* nodes = root.get("nodes");
  if (!nodes || nodes->type != json::Value::kArray)
    return fail(err, Status::kBadFormat, "json: \"nodes\" must be an array");
  if (nodes->arr.size() > kMaxNodes) return fail(err, Status::kTooLarge, "json: too many nodes");
  std::unordered_map<std::string, uint32_t> index;
  g->nodes.resize(nodes->arr.size());
  std::vector<int> heavy_given(nodes->arr.size(), -1);
  for (size_t i = 0; i < nodes->arr.size(); ++i) {
    const json::Value& jn = nodes->arr[i];
    const json::Value* name = jn.get("name");
    const json::Value* op = jn.get("op");
    if (jn.type != json::Value::kObject || !name || name->type != json::Value::kString || !op ||
        op->type != json::Value::kString)
      return fail(err, Status::kBadFormat,
                  "json: node " + std::to_string(i) + " needs string \"name\" and \"op\"");
    Node& n = g->nodes[i];
    n.name = name->str;
    n.op = op->str;
    if (!index.emplace(n.name, uint32_t(i)).second)
      return fail(err, Status::kBadFormat, "json: duplicate node name '" + n.name + "'");
    if (const json::Value* in = jn.get("inputs")) {
      if (in->type != json::Value::kArray)
        return fail(err, Status::kBadFormat,
                    "json: \"inputs\" of '" + n.name + "' must be an array");
      for (const json::Value& s : in->arr) {
        if (s.type != json::Value::kString)
          return fail(err, Status::kBadFormat, "json: inputs must be strings");
        n.inputs.push_back(s.str);
      }
    }
    if (const json::Value* h = jn.get("heavy")) {
      if (h->type != json::Value::kBool)
        return fail(err, Status::kBadFormat, "json: \"heavy\" must be a boolean");
      heavy_given[i] = h->b;
    }
    if (const json::Value* fl = jn.get("flops")) {
      if (fl->type != json::Value::kNumber || !(fl->num >= 0) || fl->num > 1e30)
        return fail(err, Status::kBadFormat, "json: \"flops\" must be a non-negative number");
      n.flops = fl->num;
    }
    if (const json::Value* sh = jn.get("shape"); sh && sh->type == json::Value::kArray)
      for (const json::Value& d : sh->arr)
        n.shape.push_back(d.type == json::Value::kNumber ? int64_t(d.num) : -1);
  }
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    Node& n = g->nodes[i];
    bool first_data = true;
    bool operand0_const = false;
    for (const std::string& in : n.inputs) {
      bool control = !in.empty() && in[0] == '^';
      std::string name = control ? in.substr(1) : in;
      auto it = index.find(name);
      if (it == index.end() && name.find(':') != std::string::npos)
        it = index.find(name.substr(0, name.find(':')));
      if (it != index.end()) n.preds.push_back(it->second);
      if (!control && first_data) {
        first_data = false;
        if (it != index.end()) n.operand0 = it->second;
        operand0_const =
            constants.count(name) || (it != index.end() && is_const_op(g->nodes[it->second].op));
      }
    }
    if (heavy_given[i] >= 0) {
      n.heavy = heavy_given[i];
      continue;
    }
    const HeavyOp* h = nullptr;
    if (framework != "tf") h = heavy_op_find(Framework::kOnnx, n.op);
    if (!h && framework != "onnx") h = heavy_op_find(Framework::kTf, n.op);
    n.heavy = h && (h->rule == HeavyRule::kAlways || operand0_const);
  }
  return Status::kOk;
}

}  // namespace

Status json_read(std::string_view text, Graph* out, std::string* err) {
  json::Value root;
  std::string perr;
  if (!json::parse(text, &root, &perr)) return fail(err, Status::kBadFormat, "json: " + perr);
  if (root.type != json::Value::kObject)
    return fail(err, Status::kBadFormat, "json: top level must be an object");
  std::string framework;
  if (const json::Value* f = root.get("framework"); f && f->type == json::Value::kString)
    framework = f->str;
  std::unordered_set<std::string> constants;
  if (const json::Value* c = root.get("constants"); c && c->type == json::Value::kArray)
    for (const json::Value& s : c->arr)
      if (s.type == json::Value::kString) constants.insert(s.str);
  Graph g;
  g.format = Format::kJson;
  g.path = out->path;
  if (const json::Value* n = root.get("name"); n && n->type == json::Value::kString)
    g.name = n->str;
  Status st = nodes_read(root, constants, framework, &g, err);
  if (st != Status::kOk) return st;
  if (const json::Value* subs = root.get("subgraphs"); subs && subs->type == json::Value::kArray) {
    for (const json::Value& js : subs->arr) {
      Graph sub;
      sub.format = Format::kJson;
      sub.path = out->path;
      if (const json::Value* n = js.get("name"); n && n->type == json::Value::kString)
        sub.name = n->str;
      st = nodes_read(js, constants, framework, &sub, err);
      if (st != Status::kOk) return st;
      g.subgraphs.push_back(std::move(sub));
    }
  }
  *out = std::move(g);
  return Status::kOk;
}

}  // namespace pw::graph
