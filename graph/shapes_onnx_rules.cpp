// The helpers of the ONNX shape rules (shapes_onnx_rules.h). Every helper is defensive:
// hostile attributes give unknown dims, never undefined behaviour.
#include "graph/shapes_onnx_rules.h"

#include <algorithm>

namespace pw::graph::shape::onnx_rules {

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

bool small(int64_t v) {
  return v >= -kMaxDim && v <= kMaxDim;
}

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
  Dims out, axes;
  std::vector<bool> seen(size_t(x.rank), false);
  for (int64_t p : perm) {
    const int64_t v = axis_norm(p, x.rank);
    if (v < 0 || seen[size_t(v)]) return unknown(x.dtype);
    seen[size_t(v)] = true;
    out.push_back(x.dims[size_t(v)]);
    axes.push_back(v);
  }
  TI r = of_dims(out, x.dtype);
  // Folded values move with their dims (torch's F.pad reorders its pads this way).
  if (x.has_values && r.known() && int64_t(x.values.size()) == r.elements())
    r.values = values_gather(x, r.dims,
                             [&](const Dims& at, Dims* from) {
                               for (size_t i = 0; i < at.size(); ++i)
                                 (*from)[size_t(axes[i])] = at[i];
                               return true;
                             }),
    r.has_values = !r.values.empty() || r.elements() == 0;
  return r;
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
  if (x.has_values && r.known() && x.known() && int64_t(x.values.size()) == x.elements()) {
    r.values = values_gather(x, r.dims, [&](const Dims& at, Dims* from) {
      for (size_t i = 0; i < at.size(); ++i) {
        (*from)[i] = lo[i] + at[i] * step[i];
        if ((*from)[i] < 0 || (*from)[i] >= x.dims[i]) return false;
      }
      return true;
    });
    r.has_values = !r.values.empty() || r.elements() == 0;
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

bool mod_ok(int64_t a, int64_t b, int64_t* r) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  *r = a % b;  // C's remainder takes the dividend's sign; ONNX Mod (fmod 0) the divisor's
  if (*r != 0 && ((*r < 0) != (b < 0))) *r += b;
  return true;
}

bool fmod_ok(int64_t a, int64_t b, int64_t* r) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  *r = a % b;
  return true;
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

}  // namespace pw::graph::shape::onnx_rules
