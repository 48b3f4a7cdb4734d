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
  t->seeded = true;
}

// ---------------------------------------------------------------- ONNX data

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

// An axis attribute resolved against rank (negative counts from the end; def when absent).
bool resolve_axis(int64_t* axis, int64_t def, size_t rank) {
  if (*axis == kNoAxis) *axis = def;
  if (*axis < 0) *axis += static_cast<int64_t>(rank);
  return *axis >= 0 && *axis < static_cast<int64_t>(rank);
}

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
    bool have_y = true;  // false: only graph/ knows y (op.shape)
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
    } else if (t == "Relu" || t == "Identity" || t == "Dropout" || t == "Sigmoid" || t == "Tanh" ||
               t == "Erf" || t == "Sqrt" || t == "Cast") {
      y = x;
    } else if (t == "Clip") {
      y = x;
      for (size_t k = 1; k < 3 && k < op.inputs.size(); ++k) {
        if (op.inputs[k].empty()) continue;
        const Tensor* c = m->constant(op.inputs[k]);
        if (!c || c->data.size() != 1)
          return fail(err, "op " + op.name + ": Clip needs constant scalar bounds");
        (k == 1 ? op.lo : op.hi) = c->data[0];
      }
    } else if (t == "BatchNormalization") {
      if (x.size() < 2)
        return fail(err, "op " + op.name + ": BatchNormalization wants N x C x ...");
      for (size_t k = 1; k < 5; ++k) {
        const Tensor* c = k < op.inputs.size() ? m->constant(op.inputs[k]) : nullptr;
        if (!c || numel(c->dims) != x[1])
          return fail(err, "op " + op.name + ": BatchNormalization needs 4 constants of C values");
      }
      // A seeded variance is around 1, not around 0: a negative one would make NaNs.
      if (Tensor* var = const_cast<Tensor*>(m->constant(op.inputs[4])); var->seeded)
        for (float& v : var->data) v = 1.f + v;
      const_cast<Tensor*>(m->constant(op.inputs[4]))->seeded = false;  // once, if shared
      if (op.outputs.size() > 1) op.outputs.resize(1);                 // training outputs unused
      y = x;
    } else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow") {
      const auto* b = op.inputs.size() > 1 ? dims_of(op.inputs[1]) : nullptr;
      if (!b) return fail(err, "op " + op.name + ": " + t + " wants two inputs");
      if (*b == x)
        y = x;  // broadcasting: graph/'s shape (ONNX)
      else
        have_y = false;
    } else if (t == "Softmax") {
      if (!resolve_axis(&op.axis, -1, x.size())) return fail(err, "op " + op.name + ": bad axis");
      y = x;
    } else if (t == "Concat") {
      if (!resolve_axis(&op.axis, 1, x.size())) return fail(err, "op " + op.name + ": bad axis");
      y = x;
      y[static_cast<size_t>(op.axis)] = 0;
      for (const std::string& n : op.inputs) {
        const auto* d = dims_of(n);
        if (!d || d->size() != x.size())
          return fail(err, "op " + op.name + ": Concat rank mismatch");
        for (size_t k = 0; k < x.size(); ++k)
          if (static_cast<int64_t>(k) != op.axis && (*d)[k] != x[k])
            return fail(err, "op " + op.name + ": Concat shape mismatch");
        y[static_cast<size_t>(op.axis)] += (*d)[static_cast<size_t>(op.axis)];
      }
    } else if (t == "Flatten") {
      if (!resolve_axis(&op.axis, 1, x.size() + 1))
        return fail(err, "op " + op.name + ": bad axis");
      int64_t a = 1, b = 1;
      for (int64_t k = 0; k < static_cast<int64_t>(x.size()); ++k) (k < op.axis ? a : b) *= x[k];
      y = {a, b};
    } else if (t == "Reshape" || t == "Squeeze" || t == "Unsqueeze") {
      have_y = false;  // a copy; graph/ gives the dims
    } else if (t == "Transpose") {
      if (op.perm.empty())
        for (size_t k = x.size(); k-- > 0;) op.perm.push_back(static_cast<int64_t>(k));
      if (op.perm.size() != x.size()) return fail(err, "op " + op.name + ": bad perm");
      have_y = false;
    } else if (t == "ReduceMean") {
      if (op.axes.empty())
        for (size_t k = 0; k < x.size(); ++k) op.axes.push_back(static_cast<int64_t>(k));
      for (int64_t& a : op.axes)
        if (!resolve_axis(&a, 0, x.size())) return fail(err, "op " + op.name + ": bad axes");
      std::sort(op.axes.begin(), op.axes.end());
      have_y = false;
    } else if (t == "Slice") {
      std::vector<std::vector<int64_t>> v(4);  // starts, ends, axes, steps
      for (size_t k = 1; k < op.inputs.size() && k < 5; ++k) {
        if (op.inputs[k].empty()) continue;
        const Tensor* c = m->constant(op.inputs[k]);
        if (!c) return fail(err, "op " + op.name + ": Slice needs constant starts/ends/axes/steps");
        for (float f : c->data) v[k - 1].push_back(static_cast<int64_t>(f));
      }
      if (v[2].empty())
        for (size_t k = 0; k < v[0].size(); ++k) v[2].push_back(static_cast<int64_t>(k));
      if (v[3].empty()) v[3].assign(v[0].size(), 1);
      if (v[1].size() != v[0].size() || v[2].size() != v[0].size() || v[3].size() != v[0].size())
        return fail(err, "op " + op.name + ": Slice inputs differ in length");
      op.starts.assign(x.size(), 0);
      op.steps.assign(x.size(), 1);
      have_y = false;
      for (size_t k = 0; k < v[0].size(); ++k) {
        int64_t a = v[2][k];
        if (!resolve_axis(&a, 0, x.size()) || v[3][k] == 0)
          return fail(err, "op " + op.name + ": bad Slice axes or steps");
        const int64_t d = x[static_cast<size_t>(a)], step = v[3][k];
        int64_t b = v[0][k], e = v[1][k];
        if (b < 0) b += d;
        if (e < 0) e += d;
        if (step > 0) {
          b = std::clamp<int64_t>(b, 0, d);
          e = std::clamp<int64_t>(e, 0, d);
        } else {
          b = std::clamp<int64_t>(b, 0, d - 1);
          e = std::clamp<int64_t>(e, -1, d - 1);
        }
        op.starts[static_cast<size_t>(a)] = b;
        op.steps[static_cast<size_t>(a)] = step;
      }
    } else if (t == "MatMul" || t == "Gemm") {
      if (op.trans_a) return fail(err, "op " + op.name + ": transA is not supported");
      if (it_w != jw.end() && op.inputs.size() < 2) {
        if (x.size() != 2) return fail(err, "op " + op.name + ": " + t + " wants a 2-D input");
        add_const(op.name + "/W", {x[1], it_w->second.units});
        op.inputs.push_back(op.name + "/W");
        if (it_w->second.bias) {
          op.type = "Gemm";
          add_const(op.name + "/B", {it_w->second.units});
          op.inputs.push_back(op.name + "/B");
        }
      }
      const Tensor* w = op.inputs.size() > 1 ? m->constant(op.inputs[1]) : nullptr;
      const auto* bd = op.inputs.size() > 1 ? dims_of(op.inputs[1]) : nullptr;
      if (op.type == "MatMul" && bd && !(w && bd->size() == 2)) {
        // Both operands at run time (attention): numpy matmul over the batch dims.
        if (x.size() < 2 || bd->size() < 2 || (*bd)[bd->size() - 2] != x.back())
          return fail(err, "op " + op.name + ": MatMul inner dims differ");
        have_y = false;
      } else {
        if (!w || w->dims.size() != 2)
          return fail(err, "op " + op.name + ": needs constant 2-D weights");
        if (op.type == "Gemm" ? x.size() != 2 : x.empty())
          return fail(err, "op " + op.name + ": " + t + " wants a 2-D input here");
        const int64_t k = op.trans_b ? w->dims[1] : w->dims[0];
        const int64_t n = op.trans_b ? w->dims[0] : w->dims[1];
        if (k != x.back()) return fail(err, "op " + op.name + ": inner dims differ");
        if (op.inputs.size() > 2) {
          const Tensor* b = m->constant(op.inputs[2]);
          if (!b || numel(b->dims) != n)
            return fail(err, "op " + op.name + ": bias must be a constant of N values");
        }
        y = x;
        y.back() = n;
      }
    } else if (t == "Gather") {
      const auto* idx = op.inputs.size() > 1 ? dims_of(op.inputs[1]) : nullptr;
      if (!idx || !resolve_axis(&op.axis, 0, x.size()))
        return fail(err, "op " + op.name + ": Gather needs data, indices and a valid axis");
      const size_t a = static_cast<size_t>(op.axis);
      y.assign(x.begin(), x.begin() + static_cast<long>(a));
      y.insert(y.end(), idx->begin(), idx->end());
      y.insert(y.end(), x.begin() + static_cast<long>(a) + 1, x.end());
      for (Input& gi : m->inputs)
        if (gi.name == op.inputs[1]) gi.index_range = x[a];
    } else {
      return fail(err, "op " + op.name + ": unsupported op type '" + t + "'");
    }
    if (op.shaped) {  // graph/'s inference (ONNX) is the reference
      if (have_y && y != op.shape)
        return fail(err, "op " + op.name + ": graph/ and the engine disagree on its shape");
      y = op.shape;
    } else if (!have_y) {
      return fail(err, "op " + op.name + " (" + t +
                           "): its shape needs graph/'s shape inference (an ONNX model)");
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
  ops.reserve(q.size());
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

// Nodes, attributes and every shape come from graph/ (shapes_infer, with the inputs at the
// batch and image size asked for); this adds the weights' data and turns what graph/ folded
// (Shape -> Gather -> Div ... chains, Reshape targets) into constants.
bool load_onnx(std::string_view bytes, const LoadOptions& o, Model* m, std::string* err) {
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
