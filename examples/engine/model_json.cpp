// examples/engine/model_json: a model in the project's JSON graph schema. graph/'s JSON
// reader gives the nodes and inputs; this reads the schema's extensions the engine runs
// from (examples/engine/README.md): input shapes, declared tensors, ops' attrs and the
// synthetic weights they ask for.
#include <map>

#include "examples/engine/model_load.h"
#include "graph/graph.h"
#include "graph/json_value.h"

namespace pwe::load {
namespace {

namespace json = pw::graph::json;

std::vector<int64_t> ints_of(const json::Value* v, size_t n_if_scalar) {
  std::vector<int64_t> out;
  if (!v) return out;
  if (v->type == json::Value::kNumber) out.assign(n_if_scalar, static_cast<int64_t>(v->num));
  if (v->type == json::Value::kArray)
    for (const json::Value& e : v->arr) out.push_back(static_cast<int64_t>(e.num));
  return out;
}

int64_t int_of(const json::Value* o, const char* k, int64_t def) {
  const json::Value* v = o ? o->get(k) : nullptr;
  return v && v->type == json::Value::kNumber ? static_cast<int64_t>(v->num) : def;
}

}  // namespace

bool json_read(std::string_view bytes, const LoadOptions& o, Model* m,
               std::map<std::string, JsonWeights>* jw, std::string* err) {
  pw::graph::Graph g;
  std::string e;
  if (pw::graph::model_parse(bytes.data(), bytes.size(), pw::graph::Format::kJson, &g, &e) !=
      pw::graph::Status::kOk)
    return fail(err, "json: " + e);
  json::Value root;
  if (!json::parse(bytes, &root, &e)) return fail(err, "json: " + e);
  m->name = g.name;
  if (const json::Value* ins = root.get("inputs"); ins && ins->type == json::Value::kArray) {
    for (const json::Value& in : ins->arr) {
      const json::Value* n = in.get("name");
      if (!n || n->type != json::Value::kString) return fail(err, "json: an input without a name");
      m->inputs.push_back({n->str, ints_of(in.get("shape"), 0), 0});
    }
  }
  if (const json::Value* ts = root.get("tensors"); ts && ts->type == json::Value::kArray) {
    for (const json::Value& tv : ts->arr) {
      const json::Value* n = tv.get("name");
      if (!n || n->type != json::Value::kString) return fail(err, "json: a tensor without a name");
      Tensor t;
      t.dims = ints_of(tv.get("shape"), 0);
      fill(&t, n->str, o.seed);
      m->const_names.push_back(n->str);
      m->consts.push_back(std::move(t));
    }
  }
  const json::Value* nodes = root.get("nodes");
  std::map<std::string, int> node_names;
  for (const pw::graph::Node& n : g.nodes) node_names[n.name] = 1;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const pw::graph::Node& n = g.nodes[i];
    const json::Value* a = nodes->arr[i].get("attrs");
    Op op;
    op.name = n.name;
    op.type = n.op;
    op.outputs = {n.name};
    for (const std::string& in : n.inputs) {
      if (in.empty() || in[0] == '^') continue;
      // "x:0" names node x when no node is called "x:0" (graph/README.md).
      std::string s = in;
      const size_t colon = s.rfind(':');
      if (colon != std::string::npos && !node_names.count(s) &&
          node_names.count(s.substr(0, colon)))
        s = s.substr(0, colon);
      op.inputs.push_back(s);
    }
    op.kernel = ints_of(a ? a->get("kernel") : nullptr, 2);
    op.strides = ints_of(a ? a->get("stride") : nullptr, 2);
    std::vector<int64_t> pad = ints_of(a ? a->get("pad") : nullptr, 4);
    op.pads = pad;
    op.group = int_of(a, "group", 1);
    op.axis = int_of(a, "axis", kNoAxis);
    op.ceil_mode = int_of(a, "ceil_mode", 0);
    op.count_include_pad = int_of(a, "count_include_pad", 0);
    op.trans_b = int_of(a, "trans_b", 0);
    JsonWeights w;
    w.channels = int_of(a, "channels", 0);
    w.units = int_of(a, "units", 0);
    if (const json::Value* b = a ? a->get("bias") : nullptr; b && b->type == json::Value::kBool)
      w.bias = b->b;
    if (w.channels > 0 || w.units > 0) (*jw)[op.name] = w;
    m->ops.push_back(std::move(op));
  }
  if (const json::Value* outs = root.get("outputs"); outs && outs->type == json::Value::kArray)
    for (const json::Value& v : outs->arr) m->outputs.push_back(v.str);
  return true;
}

}  // namespace pwe::load
