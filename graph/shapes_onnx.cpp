// Shape rules for ONNX operators (onnx/docs/Operators.md), and the helpers shared with the
// TF rules. Every rule is defensive: hostile attributes (huge strides, axes out of range,
// negative dims) give unknown dims, never undefined behaviour.
#include <algorithm>
#include <string>
#include <unordered_set>

#include "graph/shapes_ops.h"

namespace pw::graph::shape {

const TI& Args::operator[](size_t k) const {
  static const TI kNone;
  return k < in.size() ? in[k] : kNone;
}

TI unknown(DType t) {
  TI r;
  r.dtype = t;
  return r;
}

TI of_dims(std::vector<int64_t> dims, DType t) {
  TI r;
  if (dims.size() > size_t(kMaxRank)) return unknown(t);
  for (int64_t& d : dims)
    if (!dim_ok(d)) d = -1;
  r.rank = static_cast<int>(dims.size());
  r.dims = std::move(dims);
  r.dtype = t;
  return r;
}

TI of_rank(int rank, DType t) {
  if (rank < 0 || rank > kMaxRank) return unknown(t);
  return of_dims(std::vector<int64_t>(size_t(rank), -1), t);
}

TI scalar_values(std::vector<int64_t> v, std::vector<int64_t> dims, DType t) {
  TI r = of_dims(std::move(dims), t);
  if (r.elements() == int64_t(v.size()) && v.size() <= kMaxFoldedElements) {
    r.values = std::move(v);
    r.has_values = true;
  }
  return r;
}

int64_t axis_norm(int64_t axis, int rank) {
  if (rank < 0) return -1;
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

bool dim_ok(int64_t d) {
  return d >= 0 && d <= kMaxDim;
}

TI broadcast(const TI& a, const TI& b) {
  DType t = a.dtype != DType::kUnknown ? a.dtype : b.dtype;
  if (a.rank < 0 || b.rank < 0) return unknown(t);
  const int r = std::max(a.rank, b.rank);
  std::vector<int64_t> d(size_t(r), -1);
  for (int i = 0; i < r; ++i) {
    const int ia = a.rank - r + i, ib = b.rank - r + i;
    const int64_t x = ia >= 0 ? a.dims[size_t(ia)] : 1;
    const int64_t y = ib >= 0 ? b.dims[size_t(ib)] : 1;
    if (x == 1)
      d[size_t(i)] = y;
    else if (y == 1)
      d[size_t(i)] = x;
    else if (x == y)
      d[size_t(i)] = x;
    else
      d[size_t(i)] = -1;  // one unknown (or a mismatch): not guessed
  }
  return of_dims(std::move(d), t);
}

bool values_of(const TI& t, std::vector<int64_t>* v) {
  if (!t.has_values || t.rank > 1) return false;
  *v = t.values;
  return true;
}

namespace {

using Dims = std::vector<int64_t>;

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

bool small(int64_t v) {
  return v >= -kMaxDim && v <= kMaxDim;
}

// Integer values of a broadcast binary op, when both sides are folded.
template <typename F>
void fold_binary(const TI& a, const TI& b, TI* out, F f) {
  if (!a.has_values || !b.has_values || !out->known()) return;
  const int64_t n = out->elements();
  if (n < 0 || n > int64_t(kMaxFoldedElements)) return;
  // Only the common forms: equal element counts, or one side a single value.
  const size_t na = a.values.size(), nb = b.values.size();
  if (!((na == size_t(n) || na == 1) && (nb == size_t(n) || nb == 1))) return;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (size_t i = 0; i < size_t(n); ++i) {
    int64_t r = 0;
    if (!f(a.values[na == 1 ? 0 : i], b.values[nb == 1 ? 0 : i], &r)) return;
    v[i] = r;
  }
  out->values = std::move(v);
  out->has_values = true;
}

// Spatial output size of a convolution or pooling window (ONNX conventions).
int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                   const std::string& auto_pad, bool ceil_mode) {
  if (!dim_ok(in) || k < 1 || s < 1 || d < 1 || !small(k) || !small(s) || !small(d) || !small(pb) ||
      !small(pe))
    return -1;
  const int64_t span = (k - 1) * d + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (in + s - 1) / s;
  if (auto_pad == "VALID") return in < span ? -1 : (in - span) / s + 1;
  const int64_t padded = in + pb + pe - span;
  if (padded < 0) return -1;
  int64_t o = (ceil_mode ? (padded + s - 1) / s : padded / s) + 1;
  // A last window that would start inside the end padding is dropped (PyTorch, ONNX Runtime).
  if (ceil_mode && (o - 1) * s >= in + pb) --o;
  return o;
}

// Kernel dims: the attribute, else the weight's spatial dims.
Dims kernel_of(const Node& n, const TI& w, int spatial) {
  Dims k = n.attr_ints("kernel_shape");
  if (k.empty() && w.rank == spatial + 2) k.assign(w.dims.begin() + 2, w.dims.end());
  return k;
}

TI conv_like(const Args& a, bool pool, bool transpose) {
  const Node& n = a.node;
  const TI& x = a[0];
  const DType t = x.dtype;
  if (x.rank < 3) return unknown(t);
  const int sp = x.rank - 2;
  const TI& w = a[1];
  Dims k = kernel_of(n, pool ? TI{} : w, sp);
  Dims s = n.attr_ints("strides"), d = n.attr_ints("dilations"), p = n.attr_ints("pads");
  const std::string ap = n.attr_string("auto_pad", "NOTSET");
  const bool ceil = n.attr_int("ceil_mode", 0) != 0;
  Dims out(size_t(x.rank), -1);
  out[0] = x.dims[0];
  if (pool) {
    out[1] = x.dims[1];
  } else if (!transpose) {
    out[1] = w.rank >= 1 ? w.dims[0] : -1;
  } else {
    const int64_t g = n.attr_int("group", 1);
    out[1] = w.rank >= 2 && w.dims[1] >= 0 && g >= 1 && g <= kMaxDim ? w.dims[1] * g : -1;
  }
  if (k.size() != size_t(sp)) return of_dims(out, t);
  const Dims op = n.attr_ints("output_padding"), os = n.attr_ints("output_shape");
  for (int i = 0; i < sp; ++i) {
    const int64_t si = s.size() == size_t(sp) ? s[size_t(i)] : 1;
    const int64_t di = d.size() == size_t(sp) ? d[size_t(i)] : 1;
    const int64_t pb = p.size() == 2 * size_t(sp) ? p[size_t(i)] : 0;
    const int64_t pe = p.size() == 2 * size_t(sp) ? p[size_t(sp) + size_t(i)] : 0;
    const int64_t in = x.dims[2 + size_t(i)];
    if (!transpose) {
      out[2 + size_t(i)] = window_out(in, k[size_t(i)], si, di, pb, pe, ap, ceil);
      continue;
    }
    if (os.size() == size_t(sp)) {
      out[2 + size_t(i)] = os[size_t(i)];
      continue;
    }
    const int64_t opad = op.size() == size_t(sp) ? op[size_t(i)] : 0;
    const int64_t ki = k[size_t(i)];
    if (!dim_ok(in) || !small(si) || !small(di) || !small(ki) || !small(pb) || !small(pe) ||
        !small(opad) || si < 1 || di < 1 || ki < 1)
      continue;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER")
      out[2 + size_t(i)] = in * si;
    else if (in >= 1)
      out[2 + size_t(i)] = si * (in - 1) + opad + (ki - 1) * di + 1 - pb - pe;
  }
  return of_dims(out, t);
}

TI matmul(const TI& a, const TI& b) {
  const DType t = a.dtype != DType::kUnknown ? a.dtype : b.dtype;
  if (a.rank < 1 || b.rank < 1) return unknown(t);
  Dims ad = a.dims, bd = b.dims;
  const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), 1);
  if (b1) bd.push_back(1);
  TI ab = of_dims(Dims(ad.begin(), ad.end() - 2), t);
  TI bb = of_dims(Dims(bd.begin(), bd.end() - 2), t);
  TI batch = broadcast(ab, bb);
  Dims out = batch.dims;
  if (!a1) out.push_back(ad[ad.size() - 2]);
  if (!b1) out.push_back(bd.back());
  return of_dims(out, t);
}

// Axes from the attribute (older opsets) or from input k (opset 13+); false when unknown.
bool axes_of(const Args& a, const char* attr, size_t k, Dims* axes, bool* given) {
  *given = false;
  if (const Attr* at = a.node.attr(attr)) {
    *axes = at->ints;
    *given = true;
    return true;
  }
  if (a.has(k)) {
    *given = true;
    return values_of(a[k], axes);
  }
  return true;
}

TI reduce(const Args& a, const TI& x, bool axes_input) {
  const Node& n = a.node;
  Dims axes;
  bool given = false;
  if (!axes_of(a, "axes", axes_input ? 1 : 99, &axes, &given)) return unknown(x.dtype);
  if (x.rank < 0) return unknown(x.dtype);
  const bool keep = n.attr_int("keepdims", 1) != 0;
  if (!given || axes.empty()) {
    if (n.attr_int("noop_with_empty_axes", 0)) return of_dims(x.dims, x.dtype);
    axes.clear();
    for (int i = 0; i < x.rank; ++i) axes.push_back(i);
  }
  std::vector<bool> red(size_t(x.rank), false);
  for (int64_t ax : axes) {
    const int64_t v = axis_norm(ax, x.rank);
    if (v < 0) return unknown(x.dtype);
    red[size_t(v)] = true;
  }
  Dims out;
  for (int i = 0; i < x.rank; ++i) {
    if (!red[size_t(i)])
      out.push_back(x.dims[size_t(i)]);
    else if (keep)
      out.push_back(1);
  }
  return of_dims(out, x.dtype);
}

TI reshape(const TI& x, const Dims& target, bool allowzero) {
  Dims out = target;
  int minus = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      out[i] = x.rank >= 0 && i < size_t(x.rank) ? x.dims[i] : -1;
    } else if (out[i] == -1) {
      if (minus >= 0) return unknown(x.dtype);
      minus = int(i);
    } else if (!dim_ok(out[i])) {
      return unknown(x.dtype);
    }
  }
  if (minus >= 0) {
    out[size_t(minus)] = -1;
    const int64_t total = x.elements();
    int64_t rest = 1;
    bool known = total >= 0;
    for (size_t i = 0; i < out.size() && known; ++i) {
      if (int(i) == minus) continue;
      if (out[i] < 0)
        known = false;
      else if (out[i] == 0)
        rest = 0;
      else
        rest = rest > (int64_t{1} << 62) / out[i] ? -1 : rest * out[i];
      if (rest < 0) known = false;
    }
    if (known && rest > 0 && total % rest == 0) out[size_t(minus)] = total / rest;
  }
  TI r = of_dims(out, x.dtype);
  if (x.has_values && r.elements() == int64_t(x.values.size())) {
    r.values = x.values;
    r.has_values = true;
  }
  return r;
}

TI transpose(const TI& x, Dims perm) {
  if (x.rank < 0) return unknown(x.dtype);
  if (perm.empty())
    for (int i = x.rank - 1; i >= 0; --i) perm.push_back(i);
  if (perm.size() != size_t(x.rank)) return unknown(x.dtype);
  Dims out;
  std::vector<bool> seen(size_t(x.rank), false);
  for (int64_t p : perm) {
    const int64_t v = axis_norm(p, x.rank);
    if (v < 0 || seen[size_t(v)]) return unknown(x.dtype);
    seen[size_t(v)] = true;
    out.push_back(x.dims[size_t(v)]);
  }
  return of_dims(out, x.dtype);
}

TI concat(const std::vector<const TI*>& parts, int64_t axis_attr) {
  if (parts.empty()) return unknown();
  const DType t = parts[0]->dtype;
  int rank = -1;
  for (const TI* p : parts)
    if (p->rank >= 0) rank = p->rank;
  if (rank < 0) return unknown(t);
  const int64_t axis = axis_norm(axis_attr, rank);
  if (axis < 0) return unknown(t);
  Dims out(size_t(rank), -1);
  int64_t sum = 0;
  bool all = true;
  for (const TI* p : parts) {
    if (p->rank != rank) {
      if (p->rank >= 0) return unknown(t);
      all = false;
      continue;
    }
    for (int i = 0; i < rank; ++i)
      if (i != axis && out[size_t(i)] < 0) out[size_t(i)] = p->dims[size_t(i)];
    const int64_t d = p->dims[size_t(axis)];
    if (d < 0)
      all = false;
    else
      sum = std::min(sum + d, kMaxDim + 1);
  }
  out[size_t(axis)] = all ? sum : -1;
  TI r = of_dims(out, t);
  if (rank == 1 && r.known()) {
    std::vector<int64_t> v;
    for (const TI* p : parts) {
      if (!p->has_values) return r;
      v.insert(v.end(), p->values.begin(), p->values.end());
    }
    if (int64_t(v.size()) == r.elements() && v.size() <= kMaxFoldedElements) {
      r.values = std::move(v);
      r.has_values = true;
    }
  }
  return r;
}

TI gather(const TI& data, const TI& idx, int64_t axis_attr) {
  const DType t = data.dtype;
  if (data.rank < 1 || idx.rank < 0) return unknown(t);
  const int64_t axis = axis_norm(axis_attr, data.rank);
  if (axis < 0) return unknown(t);
  Dims out(data.dims.begin(), data.dims.begin() + axis);
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), data.dims.begin() + axis + 1, data.dims.end());
  TI r = of_dims(out, t);
  // Folding: a 1-D data tensor (a shape) indexed by constants.
  if (data.rank == 1 && data.has_values && idx.has_values && r.known()) {
    std::vector<int64_t> v;
    const int64_t n = int64_t(data.values.size());
    for (int64_t i : idx.values) {
      if (i < 0) i += n;
      if (i < 0 || i >= n) return r;
      v.push_back(data.values[size_t(i)]);
    }
    if (int64_t(v.size()) == r.elements()) r.values = std::move(v), r.has_values = true;
  }
  return r;
}

TI squeeze(const TI& x, const Dims& axes, bool given) {
  if (x.rank < 0) return unknown(x.dtype);
  std::vector<bool> drop(size_t(x.rank), false);
  if (!given || axes.empty()) {
    for (int i = 0; i < x.rank; ++i) {
      if (x.dims[size_t(i)] < 0) return unknown(x.dtype);  // which dims are 1 is not known
      drop[size_t(i)] = x.dims[size_t(i)] == 1;
    }
  } else {
    for (int64_t ax : axes) {
      const int64_t v = axis_norm(ax, x.rank);
      if (v < 0) return unknown(x.dtype);
      drop[size_t(v)] = true;
    }
  }
  Dims out;
  for (int i = 0; i < x.rank; ++i)
    if (!drop[size_t(i)]) out.push_back(x.dims[size_t(i)]);
  TI r = of_dims(out, x.dtype);
  if (x.has_values) r.values = x.values, r.has_values = true;
  return r;
}

TI unsqueeze(const TI& x, const Dims& axes) {
  if (x.rank < 0) return unknown(x.dtype);
  const int r = x.rank + int(axes.size());
  if (r > kMaxRank) return unknown(x.dtype);
  std::vector<bool> ins(size_t(r), false);
  for (int64_t ax : axes) {
    const int64_t v = axis_norm(ax, r);
    if (v < 0 || ins[size_t(v)]) return unknown(x.dtype);
    ins[size_t(v)] = true;
  }
  Dims out;
  size_t j = 0;
  for (int i = 0; i < r; ++i) out.push_back(ins[size_t(i)] ? 1 : x.dims[j++]);
  TI t = of_dims(out, x.dtype);
  if (x.has_values) t.values = x.values, t.has_values = true;
  return t;
}

TI slice(const TI& x, const Dims& starts, const Dims& ends, Dims axes, Dims steps) {
  if (x.rank < 0 || starts.size() != ends.size()) return unknown(x.dtype);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) return unknown(x.dtype);
  Dims out = x.dims;
  std::vector<int64_t> lo(size_t(x.rank), 0), step(size_t(x.rank), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t ax = axis_norm(axes[i], x.rank);
    if (ax < 0 || steps[i] == 0) return unknown(x.dtype);
    const int64_t d = x.dims[size_t(ax)];
    if (d < 0) continue;
    const int64_t st = steps[i];
    // Clamp as the spec does; int64 min/max bounds ("to the end") are common.
    auto clamp = [&](int64_t v, bool is_end) {
      if (v < 0) v = v < -d ? -1 : v + d;
      if (st > 0) return std::min(std::max<int64_t>(v, 0), d);
      (void)is_end;
      return std::min(std::max<int64_t>(v, -1), d - 1);
    };
    const int64_t s = clamp(starts[i], false), e = clamp(ends[i], true);
    int64_t n = 0;
    if (st > 0 && e > s) n = (e - s + st - 1) / st;
    if (st < 0 && s > e) n = (s - e + (-st) - 1) / (-st);
    out[size_t(ax)] = n;
    lo[size_t(ax)] = s;
    step[size_t(ax)] = st;
  }
  TI r = of_dims(out, x.dtype);
  if (x.rank == 1 && x.has_values && r.known()) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < r.dims[0]; ++i) {
      const int64_t at = lo[0] + i * step[0];
      if (at < 0 || at >= int64_t(x.values.size())) return r;
      v.push_back(x.values[size_t(at)]);
    }
    r.values = std::move(v), r.has_values = true;
  }
  return r;
}

bool sum_checked(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_add_overflow(a, b, r);
}
bool sub_ok(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_sub_overflow(a, b, r);
}
bool mul_ok(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_mul_overflow(a, b, r);
}
bool div_ok(int64_t a, int64_t b, int64_t* r) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  *r = a / b;  // ONNX integer Div truncates, as C++ does
  return true;
}

const std::unordered_set<std::string>& unary_ops() {
  static const std::unordered_set<std::string> s = {"Relu",
                                                    "LeakyRelu",
                                                    "Sigmoid",
                                                    "Tanh",
                                                    "Erf",
                                                    "Gelu",
                                                    "Exp",
                                                    "Log",
                                                    "Sqrt",
                                                    "Reciprocal",
                                                    "Neg",
                                                    "Abs",
                                                    "Floor",
                                                    "Ceil",
                                                    "Round",
                                                    "Sign",
                                                    "Softplus",
                                                    "Softsign",
                                                    "HardSigmoid",
                                                    "HardSwish",
                                                    "Selu",
                                                    "Elu",
                                                    "Celu",
                                                    "Mish",
                                                    "Not",
                                                    "Sin",
                                                    "Cos",
                                                    "Tan",
                                                    "Asin",
                                                    "Acos",
                                                    "Atan",
                                                    "Sinh",
                                                    "Cosh",
                                                    "ThresholdedRelu",
                                                    "Clip",
                                                    "Softmax",
                                                    "LogSoftmax",
                                                    "Hardmax",
                                                    "CumSum",
                                                    "Trilu",
                                                    "Shrink",
                                                    "LRN",
                                                    "LpNormalization",
                                                    "InstanceNormalization",
                                                    "MeanVarianceNormalization",
                                                    "QuantizeLinear",
                                                    "DequantizeLinear",
                                                    "BitwiseNot",
                                                    "IsNaN",
                                                    "IsInf"};
  return s;
}

const std::unordered_set<std::string>& binary_ops() {
  static const std::unordered_set<std::string> s = {
      "Add",       "Sub",       "Mul",   "Div",  "Pow",      "Max",         "Min",
      "Mean",      "Sum",       "Equal", "Less", "Greater",  "LessOrEqual", "GreaterOrEqual",
      "And",       "Or",        "Xor",   "Mod",  "BitShift", "PRelu",       "BitwiseAnd",
      "BitwiseOr", "BitwiseXor"};
  return s;
}

}  // namespace

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
