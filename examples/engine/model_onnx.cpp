// examples/engine/model_onnx: an ONNX model's ops and constants. graph/ gives the nodes,
// attributes and every shape (the same reader parwidth uses for the width); this reads
// what only an executor needs, the initializers' and Constant nodes' data, with graph/'s
// protobuf wire reader.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "examples/engine/model_load.h"
#include "graph/graph.h"
#include "graph/proto_reader.h"

namespace pwe::load {
namespace {

namespace proto = pw::graph::proto;

// What graph/ does not carry: the float data of initializers and Constant nodes (graph/
// keeps their dims and small integer values only).
struct OnnxData {
  std::map<std::string, Tensor> inits;
  std::map<size_t, Tensor> constants;  // node index -> its "value" tensor
};

// Integers live in float tensors here; Slice's "to the end" (INT64_MAX) and the like are
// clamped to 2^40, which a float holds exactly and no dimension reaches.
float int_as_float(int64_t v) {
  constexpr int64_t kBig = int64_t{1} << 40;
  return static_cast<float>(std::clamp(v, -kBig, kBig));
}

bool read_tensor(std::string_view b, std::string* name, Tensor* t, std::string* err) {
  proto::Reader r(b, 3);
  proto::Field f;
  int32_t dtype = 1;
  std::string_view raw;
  std::vector<float> floats;
  while (r.next(&f)) {
    if (f.number == 1) {
      proto::int64s_read(f, [&](int64_t v) { t->dims.push_back(v); });
    } else if (f.number == 2 && f.wire == proto::kVarint) {
      dtype = static_cast<int32_t>(f.varint);
    } else if (f.number == 4) {
      proto::floats_read(f, [&](float v) { floats.push_back(v); });
    } else if (f.number == 7) {  // int64_data
      proto::int64s_read(f, [&](int64_t v) { floats.push_back(int_as_float(v)); });
    } else if (f.number == 8 && f.wire == proto::kLen) {
      name->assign(f.bytes);
    } else if (f.number == 9 && f.wire == proto::kLen) {
      raw = f.bytes;
    }
  }
  if (!r.ok()) return fail(err, std::string("onnx tensor: ") + r.error());
  const int64_t n = numel(t->dims);
  t->integer = dtype == 6 || dtype == 7;
  if (dtype == 1 && !raw.empty() && raw.size() == static_cast<size_t>(n) * 4) {
    t->data.resize(static_cast<size_t>(n));
    memcpy(t->data.data(), raw.data(), raw.size());
  } else if (dtype == 1 && floats.size() == static_cast<size_t>(n)) {
    t->data = std::move(floats);
  } else if (dtype == 7 && raw.size() == static_cast<size_t>(n) * 8) {  // int64 constants
    t->data.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t v;
      memcpy(&v, raw.data() + i * 8, 8);
      t->data[static_cast<size_t>(i)] = int_as_float(v);
    }
  } else if (dtype == 6 && raw.size() == static_cast<size_t>(n) * 4) {  // int32 constants
    t->data.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      memcpy(&v, raw.data() + i * 4, 4);
      t->data[static_cast<size_t>(i)] = static_cast<float>(v);
    }
  } else if (dtype == 7 && floats.size() == static_cast<size_t>(n)) {
    t->data = std::move(floats);
  }  // else: stripped; filled later
  return true;
}

// A Constant node's "value" tensor (NodeProto.attribute = 5, AttributeProto.t = 5).
bool read_constant_value(std::string_view b, Tensor* value, bool* has_value, std::string* err) {
  proto::Reader r(b, 3);
  proto::Field f;
  while (r.next(&f)) {
    if (f.number != 5 || f.wire != proto::kLen) continue;
    proto::Reader a(f.bytes, 4);
    proto::Field af;
    std::string_view name, t;
    while (a.next(&af)) {
      if (af.number == 1 && af.wire == proto::kLen) name = af.bytes;
      if (af.number == 5 && af.wire == proto::kLen) t = af.bytes;
    }
    if (!a.ok()) return fail(err, std::string("onnx attribute: ") + a.error());
    if (name == "value" && !t.empty()) {
      std::string tn;
      if (!read_tensor(t, &tn, value, err)) return false;
      *has_value = true;
    }
  }
  return r.ok() ? true : fail(err, std::string("onnx node: ") + r.error());
}

bool onnx_data(std::string_view bytes, OnnxData* x, std::string* err) {
  proto::Reader model(bytes, 0);
  proto::Field f;
  std::string_view graph;
  while (model.next(&f))
    if (f.number == 7 && f.wire == proto::kLen) graph = f.bytes;
  if (!model.ok() || graph.empty()) return fail(err, "onnx: no graph");
  proto::Reader g(graph, 1);
  size_t node = 0;
  while (g.next(&f)) {
    if (f.wire != proto::kLen) continue;
    if (f.number == 1) {
      Tensor value;
      bool has_value = false;
      if (!read_constant_value(f.bytes, &value, &has_value, err)) return false;
      if (has_value) x->constants[node] = std::move(value);
      ++node;
    } else if (f.number == 5) {
      std::string name;
      Tensor t;
      if (!read_tensor(f.bytes, &name, &t, err)) return false;
      x->inits[name] = std::move(t);
    }
  }
  return g.ok() ? true : fail(err, std::string("onnx graph: ") + g.error());
}

// The executor's fields of an op, from graph/'s attributes.
void op_attrs(const pw::graph::Node& n, Op* op) {
  op->kernel = n.attr_ints("kernel_shape");
  op->strides = n.attr_ints("strides");
  op->pads = n.attr_ints("pads");
  op->dilations = n.attr_ints("dilations");
  op->perm = n.attr_ints("perm");
  op->axes = n.attr_ints("axes");
  op->group = n.attr_int("group", 1);
  op->axis = n.attr("axis") ? n.attr_int("axis", 0) : kNoAxis;
  op->trans_a = n.attr_int("transA", 0);
  op->trans_b = n.attr_int("transB", 0);
  op->ceil_mode = n.attr_int("ceil_mode", 0);
  op->count_include_pad = n.attr_int("count_include_pad", 0);
  op->keepdims = n.attr_int("keepdims", 1);
  op->alpha = static_cast<float>(n.attr_float("alpha", 1.0));
  op->beta = static_cast<float>(n.attr_float("beta", 1.0));
  op->epsilon = static_cast<float>(n.attr_float("epsilon", 1e-5));
  op->lo = static_cast<float>(n.attr_float("min", -INFINITY));
  op->hi = static_cast<float>(n.attr_float("max", INFINITY));
  op->mode = n.attr_string("mode", "");
}

}  // namespace

// Nodes, attributes and every shape come from graph/ (shapes_infer, with the inputs at the
// batch and image size asked for); this adds the weights' data and turns what graph/ folded
// (Shape -> Gather -> Div ... chains, Reshape targets) into constants.
bool onnx_read(std::string_view bytes, const LoadOptions& o, Model* m, std::string* err) {
  pw::graph::Graph g;
  std::string e;
  if (pw::graph::model_parse(bytes.data(), bytes.size(), pw::graph::Format::kOnnx, &g, &e) !=
      pw::graph::Status::kOk)
    return fail(err, "onnx: " + e);
  OnnxData x;
  if (!onnx_data(bytes, &x, err)) return false;
  m->name = g.name;
  pw::graph::InputShapes given;
  for (const std::string& name : g.inputs) {
    auto it = g.tensors.find(name);
    std::vector<int64_t> dims = it != g.tensors.end() ? it->second.dims : std::vector<int64_t>{};
    for (int64_t& d : dims) d = d < 0 ? 1 : d;  // a symbolic dim (batch) becomes 1
    m->inputs.push_back({name, dims, 0});
  }
  apply_sizes(m, o);
  for (const Input& in : m->inputs) given[in.name] = in.dims;
  if (pw::graph::shapes_infer(&g, given, nullptr, &e) != pw::graph::Status::kOk)
    return fail(err, "onnx shapes: " + e);
  for (auto& [name, t] : x.inits) {
    m->const_names.push_back(name);
    if (t.data.empty()) fill(&t, name, o.seed);
    m->consts.push_back(std::move(t));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    pw::graph::Node& n = g.nodes[i];
    if (n.op == "Constant") {  // a constant tensor, not an operator
      auto it = x.constants.find(i);
      if (it == x.constants.end() || n.outputs.empty())
        return fail(err, "onnx: unsupported Constant " + n.name);
      if (it->second.data.empty()) fill(&it->second, n.outputs[0], o.seed);
      m->const_names.push_back(n.outputs[0]);
      m->consts.push_back(std::move(it->second));
      continue;
    }
    if ((n.op == "Identity" || n.op == "Dropout") && !n.inputs.empty() && !n.outputs.empty()) {
      // torch's exporter shares weights through Identity nodes: a constant, not an op.
      if (const Tensor* t = m->constant(n.inputs[0])) {
        Tensor copy = *t;
        m->const_names.push_back(n.outputs[0]);
        m->consts.push_back(std::move(copy));
        continue;
      }
    }
    if (n.outputs.size() == 1 && !n.out.empty() && n.out[0].has_values && n.out[0].known()) {
      Tensor t;  // integer values graph/ folded: a constant too
      t.dims = n.out[0].dims;
      t.integer = true;
      for (int64_t v : n.out[0].values) t.data.push_back(int_as_float(v));
      if (numel(t.dims) == static_cast<int64_t>(t.data.size())) {
        m->const_names.push_back(n.outputs[0]);
        m->consts.push_back(std::move(t));
        continue;
      }
    }
    Op op;
    op_attrs(n, &op);
    op.name = n.name.empty() ? n.op + "_" + std::to_string(i) : n.name;
    op.type = n.op;
    op.inputs = n.inputs;
    op.outputs = n.outputs;
    if ((op.type == "Dropout" || op.type == "BatchNormalization") && op.outputs.size() > 1)
      op.outputs.resize(1);  // mask / training statistics unused
    if (!n.out.empty() && n.out[0].known()) {
      op.shape = n.out[0].dims;
      op.shaped = true;
    }
    m->ops.push_back(std::move(op));
  }
  m->outputs = g.outputs;
  return true;
}

}  // namespace pwe::load
