// examples/engine/model_shapes: every op's output shape, checked against what the
// executors support; axes, pads, Slice ranges resolved; JSON ops' weights made.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "examples/engine/model_load.h"

namespace pwe::load {
namespace {

// An axis attribute resolved against rank (negative counts from the end; def when absent).
bool resolve_axis(int64_t* axis, int64_t def, size_t rank) {
  if (*axis == kNoAxis) *axis = def;
  if (*axis < 0) *axis += static_cast<int64_t>(rank);
  return *axis >= 0 && *axis < static_cast<int64_t>(rank);
}

}  // namespace

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

}  // namespace pwe::load
