// examples/engine/model: ONNX / JSON -> pwe::Model. graph/ gives the nodes, op types and
// inputs (the same reader parwidth uses for the width); this file reads what only an
// executor needs: ONNX attributes, initializer dims and data, graph input shapes (with
// graph/'s protobuf wire reader), or the JSON schema's extensions (examples/engine/README.md).
#include "examples/engine/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>

#include "graph/graph.h"
#include "graph/json_value.h"
#include "graph/proto_reader.h"

namespace pwe {
namespace {

namespace proto = pw::graph::proto;
namespace json = pw::graph::json;

// splitmix64: a seeded stream per tensor name, independent of load order.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed, const std::string& name) : s(seed * 0x9E3779B97F4A7C15ull) {
    for (unsigned char c : name) s = (s ^ c) * 0x100000001B3ull;
  }
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>((next() >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f; }
};

bool fail(std::string* err, const std::string& why) {
  if (err) *err = why;
  return false;
}

// Fills a tensor whose data the model lacks: He-uniform for weights (fan-in from dims
// 1..), small values for 1-D tensors (biases), so deep stacks keep finite activations.
void fill(Tensor* t, const std::string& name, uint64_t seed) {
  const int64_t n = numel(t->dims);
  t->data.resize(static_cast<size_t>(n));
  Rng r(seed, name);
  int64_t fan_in = 1;
  for (size_t i = 1; i < t->dims.size(); ++i) fan_in *= t->dims[i];
  const float scale = t->dims.size() >= 2 ? std::sqrt(6.f / static_cast<float>(fan_in)) : 0.1f;
  for (auto& v : t->data) v = r.uniform() * scale;
}

// ---------------------------------------------------------------- ONNX extras

struct OnnxExtras {
  std::vector<Op> attrs;  // per node, in file order: only attribute fields filled
  std::map<std::string, Tensor> inits;
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
  std::vector<std::string> outputs;
};

bool read_tensor(std::string_view b, std::string* name, Tensor* t, std::string* err) {
  proto::Reader r(b, 3);
  proto::Field f;
  int32_t dtype = 1;
  std::string_view raw;
  std::vector<float> floats;
  while (r.next(&f)) {
    if (f.number == 1) {
      proto::read_int64s(f, [&](int64_t v) { t->dims.push_back(v); });
    } else if (f.number == 2 && f.wire == proto::kVarint) {
      dtype = static_cast<int32_t>(f.varint);
    } else if (f.number == 4) {
      if (f.wire == proto::kLen) {
        for (size_t i = 0; i + 4 <= f.bytes.size(); i += 4) {
          float v;
          memcpy(&v, f.bytes.data() + i, 4);
          floats.push_back(v);
        }
      } else if (f.wire == proto::kFixed32) {
        uint32_t u = static_cast<uint32_t>(f.varint);
        float v;
        memcpy(&v, &u, 4);
        floats.push_back(v);
      }
    } else if (f.number == 8 && f.wire == proto::kLen) {
      name->assign(f.bytes);
    } else if (f.number == 9 && f.wire == proto::kLen) {
      raw = f.bytes;
    }
  }
  if (!r.ok()) return fail(err, std::string("onnx tensor: ") + r.error());
  const int64_t n = numel(t->dims);
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
      t->data[static_cast<size_t>(i)] = static_cast<float>(v);
    }
  }  // else: stripped; filled later
  return true;
}

bool read_node_attrs(std::string_view b, Op* op, Tensor* value, bool* has_value, std::string* err) {
  proto::Reader r(b, 3);
  proto::Field f;
  while (r.next(&f)) {
    if (f.number != 5 || f.wire != proto::kLen) continue;
    proto::Reader a(f.bytes, 4);
    proto::Field af;
    std::string name;
    int64_t i = 0;
    float fl = 0;
    std::vector<int64_t> ints;
    std::string_view t;
    while (a.next(&af)) {
      if (af.number == 1 && af.wire == proto::kLen) name.assign(af.bytes);
      if (af.number == 2 && af.wire == proto::kFixed32) {
        uint32_t u = static_cast<uint32_t>(af.varint);
        memcpy(&fl, &u, 4);
      }
      if (af.number == 3 && af.wire == proto::kVarint) i = static_cast<int64_t>(af.varint);
      if (af.number == 5 && af.wire == proto::kLen) t = af.bytes;
      if (af.number == 4 && af.wire == proto::kLen) op->mode.assign(af.bytes);
      if (af.number == 8) proto::read_int64s(af, [&](int64_t v) { ints.push_back(v); });
    }
    if (!a.ok()) return fail(err, std::string("onnx attribute: ") + a.error());
    if (name == "kernel_shape")
      op->kernel = ints;
    else if (name == "strides")
      op->strides = ints;
    else if (name == "pads")
      op->pads = ints;
    else if (name == "dilations")
      op->dilations = ints;
    else if (name == "group")
      op->group = i;
    else if (name == "axis")
      op->axis = i;
    else if (name == "transA")
      op->trans_a = i;
    else if (name == "transB")
      op->trans_b = i;
    else if (name == "ceil_mode")
      op->ceil_mode = i;
    else if (name == "count_include_pad")
      op->count_include_pad = i;
    else if (name == "alpha")
      op->alpha = fl;
    else if (name == "beta")
      op->beta = fl;
    else if (name == "value" && !t.empty()) {
      std::string tn;
      if (!read_tensor(t, &tn, value, err)) return false;
      *has_value = true;
    }
  }
  return r.ok() ? true : fail(err, std::string("onnx node: ") + r.error());
}

bool read_value_info(std::string_view b, std::string* name, std::vector<int64_t>* dims) {
  proto::Reader r(b, 3);
  proto::Field f;
  while (r.next(&f)) {
    if (f.number == 1 && f.wire == proto::kLen) name->assign(f.bytes);
    if (f.number != 2 || f.wire != proto::kLen) continue;
    proto::Reader type(f.bytes, 4);
    proto::Field tf;
    while (type.next(&tf)) {
      if (tf.number != 1 || tf.wire != proto::kLen) continue;
      proto::Reader tensor(tf.bytes, 5);
      proto::Field sf;
      while (tensor.next(&sf)) {
        if (sf.number != 2 || sf.wire != proto::kLen) continue;
        proto::Reader shape(sf.bytes, 6);
        proto::Field df;
        while (shape.next(&df)) {
          if (df.number != 1 || df.wire != proto::kLen) continue;
          int64_t v = 1;  // a symbolic dim (batch) becomes 1
          proto::Reader dim(df.bytes, 7);
          proto::Field vf;
          while (dim.next(&vf))
            if (vf.number == 1 && vf.wire == proto::kVarint) v = static_cast<int64_t>(vf.varint);
          dims->push_back(v);
        }
      }
    }
  }
  return r.ok();
}

bool onnx_extras(std::string_view bytes, OnnxExtras* x, Model* m, std::string* err) {
  proto::Reader model(bytes, 0);
  proto::Field f;
  std::string_view graph;
  while (model.next(&f))
    if (f.number == 7 && f.wire == proto::kLen) graph = f.bytes;
  if (!model.ok() || graph.empty()) return fail(err, "onnx: no graph");
  proto::Reader g(graph, 1);
  while (g.next(&f)) {
    if (f.wire != proto::kLen) continue;
    if (f.number == 1) {
      Op op;
      Tensor value;
      bool has_value = false;
      if (!read_node_attrs(f.bytes, &op, &value, &has_value, err)) return false;
      if (has_value) x->inits["\x01" + std::to_string(x->attrs.size())] = std::move(value);
      x->attrs.push_back(std::move(op));
    } else if (f.number == 2) {
      m->name.assign(f.bytes);
    } else if (f.number == 5) {
      std::string name;
      Tensor t;
      if (!read_tensor(f.bytes, &name, &t, err)) return false;
      x->inits[name] = std::move(t);
    } else if (f.number == 11 || f.number == 12) {
      std::string name;
      std::vector<int64_t> dims;
      if (!read_value_info(f.bytes, &name, &dims)) return fail(err, "onnx: bad value info");
      if (f.number == 12)
        x->outputs.push_back(name);
      else if (!x->inits.count(name))
        x->inputs.emplace_back(name, dims);
    }
  }
  return g.ok() ? true : fail(err, std::string("onnx graph: ") + g.error());
}

// ---------------------------------------------------------------- JSON extras

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

// Synthetic weights a JSON op declares through attrs (made once input shapes are known).
struct JsonWeights {
  int64_t channels = 0;  // Conv output channels
  int64_t units = 0;     // MatMul / Gemm output features
  bool bias = true;
};

// ---------------------------------------------------------------- shapes

bool infer(Model* m, const std::map<std::string, JsonWeights>& jw, uint64_t seed,
           std::string* err) {
  std::unordered_map<std::string, std::vector<int64_t>> shape;
  for (const Input& in : m->inputs) shape[in.name] = in.dims;
  auto add_const = [&](const std::string& n, std::vector<int64_t> d) {
    Tensor t;
    t.dims = std::move(d);
    fill(&t, n, seed);
    m->const_names.push_back(n);
    m->consts.push_back(std::move(t));
  };
  for (Op& op : m->ops) {
    auto it_w = jw.find(op.name);
    auto dims_of = [&](const std::string& n) -> const std::vector<int64_t>* {
      if (n.empty()) return nullptr;
      auto it = shape.find(n);
      if (it != shape.end()) return &it->second;
      if (const Tensor* t = m->constant(n)) return &t->dims;
      return nullptr;
    };
    if (!op.inputs.empty() && !dims_of(op.inputs[0]))
      return fail(err,
                  "op " + op.name + " (" + op.type + "): unknown input '" + op.inputs[0] + "'");
    const std::vector<int64_t> x =
        op.inputs.empty() ? std::vector<int64_t>{} : *dims_of(op.inputs[0]);
    std::vector<int64_t> y;
    const std::string& t = op.type;
    auto spatial = [&](bool pool) -> bool {
      if (x.size() != 4) return fail(err, "op " + op.name + ": " + t + " wants a 4-D input");
      if (op.kernel.size() != 2) return fail(err, "op " + op.name + ": kernel_shape must be 2-D");
      if (op.strides.empty()) op.strides = {1, 1};
      if (op.dilations.empty()) op.dilations = {1, 1};
      if (op.pads.empty()) op.pads = {0, 0, 0, 0};
      if (op.pads.size() != 4 || op.strides.size() != 2 || op.dilations.size() != 2)
        return fail(err, "op " + op.name + ": unsupported pads/strides/dilations");
      y = x;
      for (int d = 0; d < 2; ++d) {
        const int64_t ext = (op.kernel[d] - 1) * op.dilations[d] + 1;
        const int64_t span = x[2 + d] + op.pads[d] + op.pads[2 + d] - ext;
        if (span < 0) return fail(err, "op " + op.name + ": input smaller than the kernel");
        int64_t o = span / op.strides[d] + 1;
        if (pool && op.ceil_mode) {
          o = (span + op.strides[d] - 1) / op.strides[d] + 1;
          if ((o - 1) * op.strides[d] >= x[2 + d] + op.pads[d]) --o;  // last window starts inside
          // Express ceil mode as extra end padding: what the executors see.
          op.pads[2 + d] = std::max<int64_t>(op.pads[2 + d],
                                             (o - 1) * op.strides[d] + ext - x[2 + d] - op.pads[d]);
        }
        y[2 + d] = o;
      }
      op.ceil_mode = 0;
      return true;
    };
    if (t == "Conv") {
      if (it_w != jw.end() && op.inputs.size() < 2) {
        if (x.size() != 4) return fail(err, "op " + op.name + ": Conv wants a 4-D input");
        add_const(op.name + "/W",
                  {it_w->second.channels, x[1] / op.group, op.kernel.at(0), op.kernel.at(1)});
        op.inputs.push_back(op.name + "/W");
        if (it_w->second.bias) {
          add_const(op.name + "/B", {it_w->second.channels});
          op.inputs.push_back(op.name + "/B");
        }
      }
      const Tensor* w = op.inputs.size() > 1 ? m->constant(op.inputs[1]) : nullptr;
      if (!w || w->dims.size() != 4)
        return fail(err, "op " + op.name + ": Conv needs constant 4-D weights");
      if (op.kernel.empty()) op.kernel = {w->dims[2], w->dims[3]};
      if (!spatial(false)) return false;
      if (x[1] != w->dims[1] * op.group) return fail(err, "op " + op.name + ": channel mismatch");
      y[1] = w->dims[0];
    } else if (t == "MaxPool" || t == "AveragePool") {
      if (!spatial(true)) return false;
    } else if (t == "Pad") {
      // Constant-mode zero padding; pads from the second input (opset >= 11) or the attribute.
      if (op.inputs.size() > 1 && !op.inputs[1].empty()) {
        const Tensor* p = m->constant(op.inputs[1]);
        if (!p || p->data.size() != 2 * x.size())
          return fail(err, "op " + op.name + ": Pad needs constant pads (2 per dim)");
        op.pads.assign(p->data.begin(), p->data.end());
      }
      if (op.pads.size() != 2 * x.size() || x.size() != 4)
        return fail(err, "op " + op.name + ": Pad is supported on 4-D tensors only");
      if (!op.mode.empty() && op.mode != "constant")
        return fail(err, "op " + op.name + ": Pad mode '" + op.mode + "' is not supported");
      if (op.inputs.size() > 2 && !op.inputs[2].empty()) {
        const Tensor* v = m->constant(op.inputs[2]);
        if (!v || v->data.size() != 1 || v->data[0] != 0.f)
          return fail(err, "op " + op.name + ": only zero padding is supported");
      }
      y = x;
      for (size_t k = 0; k < x.size(); ++k) {
        if (op.pads[k] < 0 || op.pads[k + x.size()] < 0)
          return fail(err, "op " + op.name + ": negative pads are not supported");
        y[k] = x[k] + op.pads[k] + op.pads[k + x.size()];
      }
    } else if (t == "GlobalAveragePool") {
      if (x.size() != 4) return fail(err, "op " + op.name + ": GlobalAveragePool wants 4-D");
      y = {x[0], x[1], 1, 1};
    } else if (t == "Relu" || t == "Identity" || t == "Dropout") {
      y = x;
    } else if (t == "Add") {
      const auto* b = op.inputs.size() > 1 ? dims_of(op.inputs[1]) : nullptr;
      if (!b || *b != x) return fail(err, "op " + op.name + ": Add wants two inputs of one shape");
      y = x;
    } else if (t == "Concat") {
      int64_t ax = op.axis < 0 ? op.axis + static_cast<int64_t>(x.size()) : op.axis;
      if (ax < 0 || ax >= static_cast<int64_t>(x.size()))
        return fail(err, "op " + op.name + ": bad axis");
      op.axis = ax;
      y = x;
      y[ax] = 0;
      for (const std::string& n : op.inputs) {
        const auto* d = dims_of(n);
        if (!d || d->size() != x.size())
          return fail(err, "op " + op.name + ": Concat rank mismatch");
        for (size_t k = 0; k < x.size(); ++k)
          if (static_cast<int64_t>(k) != ax && (*d)[k] != x[k])
            return fail(err, "op " + op.name + ": Concat shape mismatch");
        y[ax] += (*d)[ax];
      }
    } else if (t == "Flatten") {
      int64_t ax = op.axis < 0 ? op.axis + static_cast<int64_t>(x.size()) : op.axis;
      int64_t a = 1, b = 1;
      for (int64_t k = 0; k < static_cast<int64_t>(x.size()); ++k) (k < ax ? a : b) *= x[k];
      y = {a, b};
    } else if (t == "MatMul" || t == "Gemm") {
      if (x.size() != 2) return fail(err, "op " + op.name + ": " + t + " wants a 2-D input here");
      if (op.trans_a) return fail(err, "op " + op.name + ": transA is not supported");
      if (it_w != jw.end() && op.inputs.size() < 2) {
        add_const(op.name + "/W", {x[1], it_w->second.units});
        op.inputs.push_back(op.name + "/W");
        if (it_w->second.bias) {
          op.type = "Gemm";
          add_const(op.name + "/B", {it_w->second.units});
          op.inputs.push_back(op.name + "/B");
        }
      }
      const Tensor* w = op.inputs.size() > 1 ? m->constant(op.inputs[1]) : nullptr;
      if (!w || w->dims.size() != 2)
        return fail(err, "op " + op.name + ": needs constant 2-D weights");
      const int64_t k = op.trans_b ? w->dims[1] : w->dims[0];
      const int64_t n = op.trans_b ? w->dims[0] : w->dims[1];
      if (k != x[1]) return fail(err, "op " + op.name + ": inner dims differ");
      if (op.inputs.size() > 2) {
        const Tensor* b = m->constant(op.inputs[2]);
        if (!b || numel(b->dims) != n)
          return fail(err, "op " + op.name + ": bias must be a constant of N values");
      }
      y = {x[0], n};
    } else if (t == "Gather") {
      const Tensor* table = m->constant(op.inputs[0]);
      const auto* idx = op.inputs.size() > 1 ? dims_of(op.inputs[1]) : nullptr;
      if (!table || !idx || op.axis != 0)
        return fail(err, "op " + op.name + ": Gather needs a constant table, indices, axis 0");
      y = *idx;
      y.insert(y.end(), table->dims.begin() + 1, table->dims.end());
      for (Input& gi : m->inputs)
        if (gi.name == op.inputs[1]) gi.index_range = table->dims[0];
    } else {
      return fail(err, "op " + op.name + ": unsupported op type '" + t + "'");
    }
    for (int64_t d : y)
      if (d <= 0) return fail(err, "op " + op.name + ": empty output");
    shape[op.outputs[0]] = y;
    m->tensor_names.push_back(op.outputs[0]);
    m->tensor_dims.push_back(y);
  }
  return true;
}

// Kahn's order over producers; rejects cycles and multi-output ops.
bool order(Model* m, std::string* err) {
  std::unordered_map<std::string, int> producer;
  for (size_t i = 0; i < m->ops.size(); ++i) {
    if (m->ops[i].outputs.size() != 1)
      return fail(err, "op " + m->ops[i].name + ": only single-output ops are supported");
    producer[m->ops[i].outputs[0]] = static_cast<int>(i);
  }
  const size_t n = m->ops.size();
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& in : m->ops[i].inputs) {
      auto it = producer.find(in);
      if (it == producer.end()) continue;
      succ[it->second].push_back(static_cast<int>(i));
      ++indeg[i];
    }
  }
  std::vector<int> q;
  for (size_t i = 0; i < n; ++i)
    if (!indeg[i]) q.push_back(static_cast<int>(i));
  for (size_t h = 0; h < q.size(); ++h)
    for (int s : succ[q[h]])
      if (--indeg[s] == 0) q.push_back(s);
  if (q.size() != n) return fail(err, "the graph has a cycle");
  std::vector<Op> ops;
  std::vector<int> pos(n);
  for (size_t k = 0; k < n; ++k) pos[q[k]] = static_cast<int>(k);
  for (int i : q) ops.push_back(std::move(m->ops[i]));
  for (Op& op : ops) {
    op.preds.clear();
    for (const std::string& in : op.inputs) {
      auto it = producer.find(in);
      if (it != producer.end()) op.preds.push_back(pos[it->second]);
    }
    std::sort(op.preds.begin(), op.preds.end());
    op.preds.erase(std::unique(op.preds.begin(), op.preds.end()), op.preds.end());
  }
  m->ops = std::move(ops);
  return true;
}

void apply_sizes(Model* m, const LoadOptions& o) {
  for (Input& in : m->inputs) {
    if (o.batch > 0 && !in.dims.empty()) in.dims[0] = o.batch;
    if (o.image_size > 0 && in.dims.size() == 4) in.dims[2] = in.dims[3] = o.image_size;
  }
}

bool load_onnx(std::string_view bytes, const LoadOptions& o, Model* m, std::string* err) {
  pw::graph::Graph g;
  std::string e;
  if (pw::graph::model_parse(bytes.data(), bytes.size(), pw::graph::Format::kOnnx, &g, &e) !=
      pw::graph::Status::kOk)
    return fail(err, "onnx: " + e);
  OnnxExtras x;
  if (!onnx_extras(bytes, &x, m, err)) return false;
  if (x.attrs.size() != g.nodes.size()) return fail(err, "onnx: node count mismatch");
  for (auto& [name, t] : x.inits) {
    if (name[0] == '\x01') continue;
    m->const_names.push_back(name);
    if (t.data.empty()) fill(&t, name, o.seed);
    m->consts.push_back(std::move(t));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    pw::graph::Node& n = g.nodes[i];
    if (n.op == "Constant") {  // a constant tensor, not an operator
      auto it = x.inits.find("\x01" + std::to_string(i));
      if (it == x.inits.end() || n.outputs.empty())
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
    Op op = std::move(x.attrs[i]);
    op.name = n.name.empty() ? n.op + "_" + std::to_string(i) : n.name;
    op.type = n.op;
    op.inputs = n.inputs;
    op.outputs = n.outputs;
    if (op.type == "Dropout" && op.outputs.size() > 1) op.outputs.resize(1);  // mask unused
    m->ops.push_back(std::move(op));
  }
  for (auto& [name, dims] : x.inputs) m->inputs.push_back({name, dims, 0});
  m->outputs = x.outputs;
  return true;
}

bool load_json(std::string_view bytes, const LoadOptions& o, Model* m,
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
    op.axis = int_of(a, "axis", op.type == "Gather" ? 0 : 1);
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

}  // namespace

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

int Model::tensor(const std::string& n) const {
  for (size_t i = 0; i < tensor_names.size(); ++i)
    if (tensor_names[i] == n) return static_cast<int>(i);
  return -1;
}

const Tensor* Model::constant(const std::string& n) const {
  for (size_t i = 0; i < const_names.size(); ++i)
    if (const_names[i] == n) return &consts[i];
  return nullptr;
}

bool model_load_bytes(const void* data, size_t size, const LoadOptions& o, Model* m,
                      std::string* err) {
  try {
    std::string_view bytes(static_cast<const char*>(data), size);
    size_t k = 0;
    while (k < size && isspace(static_cast<unsigned char>(bytes[k]))) ++k;
    std::map<std::string, JsonWeights> jw;
    const bool is_json = k < size && bytes[k] == '{';
    if (!(is_json ? load_json(bytes, o, m, &jw, err) : load_onnx(bytes, o, m, err))) return false;
    // Inputs nothing reads (ONNX lists initializers as inputs in old exports) are dropped.
    std::vector<Input> used;
    for (Input& in : m->inputs) {
      bool read = false;
      for (const Op& op : m->ops)
        for (const std::string& s : op.inputs) read |= s == in.name;
      if (read && !m->constant(in.name)) used.push_back(std::move(in));
    }
    m->inputs = std::move(used);
    apply_sizes(m, o);
    for (const Input& in : m->inputs) {
      if (in.dims.empty()) return fail(err, "input " + in.name + " has no shape");
      m->tensor_names.push_back(in.name);
      m->tensor_dims.push_back(in.dims);
    }
    if (!order(m, err) || !infer(m, jw, o.seed, err)) return false;
    if (m->outputs.empty()) {  // JSON default: what no op reads
      for (const Op& op : m->ops) {
        bool read = false;
        for (const Op& other : m->ops)
          for (const std::string& s : other.inputs) read |= s == op.outputs[0];
        if (!read) m->outputs.push_back(op.outputs[0]);
      }
    }
    for (const std::string& out : m->outputs)
      if (m->tensor(out) < 0) return fail(err, "output " + out + " is produced by no op");
    if (m->ops.empty()) return fail(err, "the graph has no operators");
    return true;
  } catch (const std::exception& e) {
    return fail(err, std::string("model: ") + e.what());
  }
}

std::vector<Tensor> model_make_inputs(const Model& m, uint64_t seed) {
  std::vector<Tensor> out;
  for (const Input& in : m.inputs) {
    Tensor t;
    t.dims = in.dims;
    t.data.resize(static_cast<size_t>(numel(in.dims)));
    Rng r(seed + 7, "input:" + in.name);
    for (float& v : t.data)
      v = in.index_range > 0 ? static_cast<float>(r.next() % static_cast<uint64_t>(in.index_range))
                             : r.uniform();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace pwe
