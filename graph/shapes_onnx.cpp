// Shape rules for ONNX operators (onnx/docs/Operators.md); their helpers are in
// shapes_onnx_rules.*, the ones shared with the TF rules in shapes_ops.*. Every rule is
// defensive: hostile attributes (huge strides, axes out of range, negative dims) give
// unknown dims, never undefined behaviour.
#include <algorithm>
#include <string>

#include "graph/shapes_onnx_rules.h"
#include "graph/shapes_ops.h"

namespace pw::graph::shape {

using namespace onnx_rules;  // NOLINT: the rules read as the operator docs do

bool onnx_infer(const Args& a, std::vector<TI>* out) {
  const Node& n = a.node;
  const std::string& op = n.op;
  const TI& x = a[0];
  out->assign(std::max<size_t>(n.outputs.size(), 1), unknown());
  TI& y = (*out)[0];

  if (unary_ops().count(op) || one_of(op, {"Identity", "Dropout", "Cast", "CastLike"})) {
    y = of_dims(x.dims, x.dtype);
    if (x.rank < 0) y = unknown(x.dtype);
    if (op == "IsNaN" || op == "IsInf") y.dtype = DType::kBool;
    if (op == "QuantizeLinear") y.dtype = a.has(2) ? a[2].dtype : DType::kUint8;
    if (op == "DequantizeLinear") y.dtype = DType::kFloat;
    if (op == "Cast") y.dtype = static_cast<DType>(std::clamp<int64_t>(n.attr_int("to", 0), 0, 16));
    if (op == "CastLike") y.dtype = a[1].dtype;
    if (one_of(op, {"Identity", "Cast", "CastLike", "Dropout", "Neg", "Abs"}) && x.has_values) {
      y.values = x.values, y.has_values = true;
      if (op == "Neg")
        for (int64_t& v : y.values) v = v == INT64_MIN ? INT64_MAX : -v;
      if (op == "Abs")
        for (int64_t& v : y.values) v = v == INT64_MIN ? INT64_MAX : (v < 0 ? -v : v);
    }
    if (op == "Dropout" && out->size() > 1) (*out)[1] = of_dims(x.dims, DType::kBool);
    if (x.rank < 0 && out->size() > 1) (*out)[1] = unknown(DType::kBool);
    return true;
  }
  if (binary_ops().count(op)) {
    y = x;
    y.values.clear(), y.has_values = false, y.constant = false;
    if (x.rank < 0) y = unknown(x.dtype);
    for (size_t k = 1; k < a.size(); ++k) y = broadcast(y, a[k]);
    if (one_of(op,
               {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}))
      y.dtype = DType::kBool;
    if (a.size() == 2) {
      if (op == "Add") fold_binary(x, a[1], &y, sum_checked);
      if (op == "Sub") fold_binary(x, a[1], &y, sub_ok);
      if (op == "Mul") fold_binary(x, a[1], &y, mul_ok);
      if (op == "Div") fold_binary(x, a[1], &y, div_ok);
      if (op == "Mod") fold_binary(x, a[1], &y, n.attr_int("fmod", 0) ? fmod_ok : mod_ok);
      if (op == "Equal")
        fold_binary(x, a[1], &y,
                    [](int64_t p, int64_t q, int64_t* r) { return *r = p == q, true; });
      if (op == "Max")
        fold_binary(x, a[1], &y,
                    [](int64_t p, int64_t q, int64_t* r) { return *r = std::max(p, q), true; });
      if (op == "Min")
        fold_binary(x, a[1], &y,
                    [](int64_t p, int64_t q, int64_t* r) { return *r = std::min(p, q), true; });
    }
    return true;
  }
  if (op == "Where") {
    y = broadcast(broadcast(x, a[1]), a[2]);
    y.dtype = a[1].dtype != DType::kUnknown ? a[1].dtype : a[2].dtype;
    const TI &c = x, &p = a[1], &q = a[2];
    const int64_t ne = y.elements();
    if (c.has_values && p.has_values && q.has_values && ne >= 0 &&
        ne <= int64_t(kMaxFoldedElements)) {
      auto at = [](const TI& t, int64_t i) -> const int64_t* {
        if (t.values.size() == 1) return &t.values[0];
        return int64_t(t.values.size()) == 0 || size_t(i) >= t.values.size() ? nullptr
                                                                             : &t.values[size_t(i)];
      };
      std::vector<int64_t> v;
      for (int64_t i = 0; i < ne; ++i) {
        const int64_t *cv = at(c, i), *pv = at(p, i), *qv = at(q, i);
        if (!cv || !pv || !qv || (c.values.size() != 1 && int64_t(c.values.size()) != ne) ||
            (p.values.size() != 1 && int64_t(p.values.size()) != ne) ||
            (q.values.size() != 1 && int64_t(q.values.size()) != ne)) {
          v.clear();
          break;
        }
        v.push_back(*cv ? *pv : *qv);
      }
      if (int64_t(v.size()) == ne) y.values = std::move(v), y.has_values = true;
    }
    return true;
  }
  if (one_of(op, {"Conv", "ConvInteger", "QLinearConv"})) {
    if (op == "QLinearConv") {
      std::vector<TI> in2 = {a[0], a[3]};
      Node m = n;
      m.inputs = {n.inputs.empty() ? "" : n.inputs[0], n.inputs.size() > 3 ? n.inputs[3] : ""};
      y = conv_like(Args{m, in2}, false, false);
      y.dtype = a.has(7) ? a[7].dtype : DType::kUint8;
      return true;
    }
    y = conv_like(a, false, false);
    if (op == "ConvInteger") y.dtype = DType::kInt32;
    return true;
  }
  if (op == "ConvTranspose") return y = conv_like(a, false, true), true;
  if (one_of(op, {"MaxPool", "AveragePool", "LpPool"})) {
    y = conv_like(a, true, false);
    if (out->size() > 1) (*out)[1] = of_dims(y.dims, DType::kInt64);  // MaxPool indices
    return true;
  }
  if (one_of(op, {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})) {
    if (x.rank < 3) return y = unknown(x.dtype), true;
    Dims d = x.dims;
    for (size_t i = 2; i < d.size(); ++i) d[i] = 1;
    return y = of_dims(d, x.dtype), true;
  }
  if (one_of(op, {"MatMul", "MatMulInteger", "QLinearMatMul"})) {
    y = op == "QLinearMatMul" ? matmul(x, a[3]) : matmul(x, a[1]);
    if (op == "MatMulInteger") y.dtype = DType::kInt32;
    if (op == "QLinearMatMul") y.dtype = a.has(7) ? a[7].dtype : DType::kUint8;
    return true;
  }
  if (op == "Gemm") {
    const TI& b = a[1];
    if (x.rank != 2 || b.rank != 2) return y = of_rank(2, x.dtype), true;
    const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
    return y = of_dims({x.dims[ta ? 1 : 0], b.dims[tb ? 0 : 1]}, x.dtype), true;
  }
  if (op == "BatchNormalization") {
    y = x.rank < 0 ? unknown(x.dtype) : of_dims(x.dims, x.dtype);
    const int64_t c = x.rank >= 2 ? x.dims[1] : -1;
    for (size_t k = 1; k < out->size(); ++k) (*out)[k] = of_dims({c}, x.dtype);
    return true;
  }
  if (op == "LayerNormalization") {
    y = x.rank < 0 ? unknown(x.dtype) : of_dims(x.dims, x.dtype);
    const int64_t axis = axis_norm(n.attr_int("axis", -1), x.rank);
    for (size_t k = 1; k < out->size(); ++k) {
      if (axis < 0) continue;
      Dims d = x.dims;
      for (size_t i = size_t(axis); i < d.size(); ++i) d[i] = 1;
      (*out)[k] = of_dims(d, DType::kFloat);
    }
    return true;
  }
  if (op == "Concat") {
    std::vector<const TI*> parts;
    for (size_t k = 0; k < a.size(); ++k)
      if (a.has(k)) parts.push_back(&a[k]);
    return y = concat(parts, n.attr_int("axis", 0)), true;
  }
  if (op == "Split") {
    const int64_t axis = axis_norm(n.attr_int("axis", 0), x.rank);
    Dims split;
    bool known = false;
    if (const Attr* s = n.attr("split"))
      split = s->ints, known = true;
    else if (a.has(1))
      known = values_of(a[1], &split);
    const size_t m = out->size();
    for (size_t k = 0; k < m; ++k) {
      if (axis < 0) {
        (*out)[k] = unknown(x.dtype);
        continue;
      }
      Dims d = x.dims;
      const int64_t full = x.dims[size_t(axis)];
      if (known && split.size() == m)
        d[size_t(axis)] = split[k];
      else if (!known && full >= 0 && full % int64_t(m) == 0)
        d[size_t(axis)] = full / int64_t(m);
      else if (!known && full >= 0 && n.attr("num_outputs")) {  // opset 18: last part smaller
        const int64_t part = (full + int64_t(m) - 1) / int64_t(m);
        d[size_t(axis)] = k + 1 < m ? part : full - part * int64_t(m - 1);
      } else
        d[size_t(axis)] = -1;
      (*out)[k] = of_dims(d, x.dtype);
    }
    return true;
  }
  if (op == "Slice") {
    Dims starts, ends, axes, steps;
    if (n.attr("starts")) {  // opset < 10
      starts = n.attr_ints("starts"), ends = n.attr_ints("ends"), axes = n.attr_ints("axes");
    } else {
      if (!values_of(a[1], &starts) || !values_of(a[2], &ends) ||
          (a.has(3) && !values_of(a[3], &axes)) || (a.has(4) && !values_of(a[4], &steps))) {
        return y = x.rank < 0 ? unknown(x.dtype) : of_rank(x.rank, x.dtype), true;
      }
    }
    return y = slice(x, starts, ends, axes, steps), true;
  }
  if (op == "Reshape") {
    Dims target;
    if (const Attr* s = n.attr("shape"))
      target = s->ints;  // opset 1-4
    else if (!values_of(a[1], &target))
      return y = a[1].rank == 1 && a[1].dims[0] >= 0 ? of_rank(int(a[1].dims[0]), x.dtype)
                                                     : unknown(x.dtype),
             true;
    return y = reshape(x, target, n.attr_int("allowzero", 0) != 0), true;
  }
  if (op == "Flatten") {
    if (x.rank < 0) return y = of_rank(2, x.dtype), true;
    int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += x.rank;
    if (axis < 0 || axis > x.rank) return y = unknown(x.dtype), true;
    TI lo = of_dims(Dims(x.dims.begin(), x.dims.begin() + axis), x.dtype);
    TI hi = of_dims(Dims(x.dims.begin() + axis, x.dims.end()), x.dtype);
    const int64_t l = lo.elements(), h = hi.elements();
    return y = of_dims({l, h}, x.dtype), true;
  }
  if (op == "Transpose") return y = transpose(x, n.attr_ints("perm")), true;
  if (op == "Squeeze" || op == "Unsqueeze") {
    Dims axes;
    bool given = false;
    if (!axes_of(a, "axes", 1, &axes, &given)) return y = unknown(x.dtype), true;
    return y = op == "Squeeze" ? squeeze(x, axes, given) : unsqueeze(x, axes), true;
  }
  if (op == "Gather") return y = gather(x, a[1], n.attr_int("axis", 0)), true;
  if (op == "GatherElements") return y = of_dims(a[1].dims, x.dtype), y.rank = a[1].rank, true;
  if (op == "GatherND") {
    const TI& idx = a[1];
    const int64_t b = n.attr_int("batch_dims", 0);
    if (x.rank < 0 || idx.rank < 1 || idx.dims.back() < 0 || b < 0 || b + idx.dims.back() > x.rank)
      return y = unknown(x.dtype), true;
    Dims d(idx.dims.begin(), idx.dims.end() - 1);
    d.insert(d.end(), x.dims.begin() + b + idx.dims.back(), x.dims.end());
    return y = of_dims(d, x.dtype), true;
  }
  if (op == "Shape") {
    if (x.rank < 0) return y = of_rank(1, DType::kInt64), true;
    int64_t s = n.attr_int("start", 0), e = n.attr_int("end", x.rank);
    if (s < 0) s += x.rank;
    if (e < 0) e += x.rank;
    s = std::clamp<int64_t>(s, 0, x.rank), e = std::clamp<int64_t>(e, 0, x.rank);
    Dims v(x.dims.begin() + s, x.dims.begin() + std::max(s, e));
    y = of_dims({int64_t(v.size())}, DType::kInt64);
    if (std::all_of(v.begin(), v.end(), [](int64_t d) { return d >= 0; }))
      y.values = v, y.has_values = true;
    return true;
  }
  if (op == "Size") {
    y = of_dims({}, DType::kInt64);
    if (x.known()) y.values = {x.elements()}, y.has_values = true;
    return true;
  }
  if (op == "Constant") {
    if (const Attr* v = n.attr("value")) {
      y = v->tensor;
    } else if (const Attr* vi = n.attr("value_int")) {
      y = scalar_values({vi->i}, {}, DType::kInt64);
    } else if (const Attr* vs = n.attr("value_ints")) {
      y = scalar_values(vs->ints, {int64_t(vs->ints.size())}, DType::kInt64);
    } else if (n.attr("value_float")) {
      y = of_dims({}, DType::kFloat);
    } else if (const Attr* vf = n.attr("value_floats")) {
      y = of_dims({int64_t(vf->floats.size())}, DType::kFloat);
    }
    y.constant = true;
    return true;
  }
  if (op == "ConstantOfShape") {
    Dims d;
    DType t = DType::kFloat;
    const Attr* v = n.attr("value");
    if (v) t = v->tensor.dtype;
    if (!values_of(x, &d)) {
      return y = x.rank == 1 && x.dims[0] >= 0 ? of_rank(int(x.dims[0]), t) : unknown(t), true;
    }
    y = of_dims(d, t);
    const int64_t ne = y.elements();
    if (ne >= 0 && ne <= int64_t(kMaxFoldedElements)) {
      const int64_t fillv =
          v && v->tensor.has_values && !v->tensor.values.empty() ? v->tensor.values[0] : 0;
      if (t != DType::kFloat && t != DType::kDouble && t != DType::kFloat16)
        y.values.assign(size_t(ne), fillv), y.has_values = true;
    }
    return true;
  }
  if (op == "Range") {
    const TI &s = a[0], &l = a[1], &d = a[2];
    y = of_rank(1, s.dtype);
    if (s.has_values && l.has_values && d.has_values && s.values.size() == 1 &&
        l.values.size() == 1 && d.values.size() == 1 && d.values[0] != 0) {
      const int64_t st = s.values[0], lim = l.values[0], de = d.values[0];
      if (!small(st) || !small(lim) || !small(de)) return true;
      const int64_t cnt = std::max<int64_t>(0, (lim - st + de + (de > 0 ? -1 : 1)) / de);
      y = of_dims({cnt}, s.dtype);
      if (cnt <= int64_t(kMaxFoldedElements)) {
        for (int64_t i = 0; i < cnt; ++i) y.values.push_back(st + i * de);
        y.has_values = true;
      }
    }
    return true;
  }
  if (op == "Expand") {
    Dims d;
    if (!values_of(a[1], &d)) return y = unknown(x.dtype), true;
    TI shape = of_dims(d, x.dtype);
    return y = broadcast(x, shape), true;
  }
  if (op == "Tile") {
    Dims r;
    if (x.rank < 0 || !values_of(a[1], &r) || r.size() != size_t(x.rank))
      return y = x.rank < 0 ? unknown(x.dtype) : of_rank(x.rank, x.dtype), true;
    Dims d = x.dims;
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = d[i] < 0 || r[i] < 0 || !small(r[i]) ? -1 : std::min(d[i] * r[i], kMaxDim + 1);
    return y = of_dims(d, x.dtype), true;
  }
  if (op.rfind("Reduce", 0) == 0) {
    // ReduceSum takes axes as an input from opset 13, the others from opset 18.
    y = reduce(a, x, !n.attr("axes") && a.has(1));
    if (op == "ReduceProd" && x.has_values && x.rank == 1 && y.known() && y.elements() == 1) {
      int64_t p = 1;
      bool ok = true;
      for (int64_t v : x.values) ok = ok && mul_ok(p, v, &p);
      if (ok) y.values = {p}, y.has_values = true;
    }
    return true;
  }
  if (op == "ArgMax" || op == "ArgMin") {
    Node m = n;
    m.attrs.push_back(
        Attr{"axes", Attr::Kind::kInts, 0, 0, "", {n.attr_int("axis", 0)}, {}, {}, {}, {}});
    y = reduce(Args{m, a.in}, x, false);
    y.dtype = DType::kInt64;
    return true;
  }
  if (op == "Pad") {
    Dims p;
    if (const Attr* pa = n.attr("pads"))
      p = pa->ints;
    else if (!values_of(a[1], &p))
      return y = x.rank < 0 ? unknown(x.dtype) : of_rank(x.rank, x.dtype), true;
    if (x.rank < 0) return y = unknown(x.dtype), true;
    Dims axes;
    if (a.has(3) && !values_of(a[3], &axes)) return y = of_rank(x.rank, x.dtype), true;
    if (axes.empty())
      for (int i = 0; i < x.rank; ++i) axes.push_back(i);
    if (p.size() != 2 * axes.size()) return y = of_rank(x.rank, x.dtype), true;
    Dims d = x.dims;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t ax = axis_norm(axes[i], x.rank);
      if (ax < 0) return y = of_rank(x.rank, x.dtype), true;
      const int64_t pb = p[i], pe = p[i + axes.size()];
      int64_t& v = d[size_t(ax)];
      v = v < 0 || !small(pb) || !small(pe) || v + pb + pe < 0 ? -1 : v + pb + pe;
    }
    return y = of_dims(d, x.dtype), true;
  }
  if (op == "TopK") {
    Dims k;
    const int64_t axis = axis_norm(n.attr_int("axis", -1), x.rank);
    Dims d = x.dims;
    if (axis >= 0) d[size_t(axis)] = values_of(a[1], &k) && k.size() == 1 ? k[0] : -1;
    y = axis < 0 ? unknown(x.dtype) : of_dims(d, x.dtype);
    if (out->size() > 1) (*out)[1] = axis < 0 ? unknown(DType::kInt64) : of_dims(d, DType::kInt64);
    return true;
  }
  if (op == "NonZero") return y = of_dims({x.rank, -1}, DType::kInt64), true;  // data-dependent
  if (one_of(op, {"ScatterND", "ScatterElements", "Scatter"}))
    return y = x, y.has_values = false, y.values.clear(), y.constant = false, true;
  if (op == "OneHot") {
    Dims depth;
    if (x.rank < 0 || x.rank + 1 > kMaxRank) return y = unknown(a[2].dtype), true;
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += x.rank + 1;
    if (axis < 0 || axis > x.rank) return y = unknown(a[2].dtype), true;
    Dims d = x.dims;
    d.insert(d.begin() + axis, values_of(a[1], &depth) && depth.size() == 1 ? depth[0] : -1);
    return y = of_dims(d, a[2].dtype), true;
  }
  if (op == "Einsum") return false;
  return false;
}

}  // namespace pw::graph::shape
