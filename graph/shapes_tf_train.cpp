// Shape rules for the TensorFlow operators that training steps add to a model's forward
// ops (tensorflow/core/ops/*.cc semantics): gradients (Conv2DBackprop*, pooling and
// batch-norm gradients, StridedSliceGrad), the shape arithmetic of the gradient tape
// (ShapeN, ConcatOffset, BroadcastGradientArgs, Range, InvertPermutation, VariableShape),
// splits, and the loops of recurrent layers (While, TensorList*). A TensorList handle is
// described by the TensorInfo of the list stacked: [length] + element shape, with the
// element dtype, as a variable's handle carries the variable's shape.
#include <algorithm>
#include <string>

#include "graph/shapes_ops.h"

namespace pw::graph::shape {
namespace {

using Dims = std::vector<int64_t>;

DType type_attr(const Node& n, const char* name, DType dflt) {
  const Attr* a = n.attr(name);
  if (!a || a->kind != Attr::Kind::kInt || a->i < 0 || a->i > 16) return dflt;
  return static_cast<DType>(a->i);
}

bool data_input(const Args& a, size_t k) {
  return k < a.size() && !a.node.inputs[k].empty() && a.node.inputs[k][0] != '^';
}

size_t data_inputs(const Args& a) {
  size_t c = 0;
  while (data_input(a, c)) ++c;
  return c;
}

// A shape vector's values as dims (negative entries unknown); false when not known.
bool dims_from(const TI& t, Dims* d) {
  if (!values_of(t, d) || t.rank != 1 || d->size() > size_t(kMaxRank)) return false;
  for (int64_t& v : *d)
    if (!dim_ok(v)) v = -1;
  return true;
}

// A shape value (1-D, out_type) that knows its values when x's dims are all known.
TI shape_of(const TI& x, DType t) {
  if (x.rank < 0) return of_rank(1, t);
  TI y = of_dims({x.rank}, t);
  if (x.known()) y.values = x.dims, y.has_values = true;
  return y;
}

// TF's element_shape operand: a scalar -1 (unknown rank) or a vector (-1 unknown dims).
TI element_shape(const TI& s, DType t) {
  Dims d;
  if (!s.has_values || s.rank != 1 || !dims_from(s, &d)) return unknown(t);
  return of_dims(d, t);
}

TI list_of(int64_t length, const TI& element, DType t) {
  if (element.rank < 0 || element.rank + 1 > kMaxRank) return unknown(t);
  Dims d = {length};
  d.insert(d.end(), element.dims.begin(), element.dims.end());
  return of_dims(d, t);
}

TI element_of(const TI& list, DType t) {
  if (list.rank < 1) return unknown(t);
  return of_dims(Dims(list.dims.begin() + 1, list.dims.end()), t);
}

// A given element shape where it says more than the list's own.
TI element_merge(const TI& list, const TI& given, DType t) {
  TI e = element_of(list, t);
  if (given.rank < 0) return e;
  if (e.rank != given.rank) return given;
  for (size_t i = 0; i < e.dims.size(); ++i)
    if (given.dims[i] >= 0) e.dims[i] = given.dims[i];
  return e;
}

// While/If: an output is the matching loop variable (or branch result) with the shape the
// op records in output_shapes, where that is known; resources and TensorLists (no dtype of
// their own here) pass the handle's description through. Values never pass: loop
// variables change from one iteration to the next.
void control_flow(const Args& a, size_t first, std::vector<TI>* out) {
  const Node& n = a.node;
  const Attr* shapes = n.attr("output_shapes");
  const Attr* types = n.attr(n.attr("Tout") ? "Tout" : "T");
  const size_t count =
      types && types->kind == Attr::Kind::kInts ? types->ints.size() : data_inputs(a) - first;
  out->assign(std::max<size_t>(count, 1), unknown());
  for (size_t k = 0; k < count; ++k) {
    const DType t = types && k < types->ints.size() && types->ints[k] >= 0 && types->ints[k] <= 16
                        ? static_cast<DType>(types->ints[k])
                        : DType::kUnknown;
    TI& y = (*out)[k];
    // While: output k is loop variable k. If: the branches' results have no input.
    if (n.op.find("While") != std::string::npos && data_input(a, first + k)) y = a[first + k];
    y.values.clear(), y.has_values = false, y.constant = false;
    if (t == DType::kUnknown) continue;  // a resource or a TensorList: its description
    y.dtype = t;
    if (shapes && shapes->kind == Attr::Kind::kShapes && k < shapes->shapes.size() &&
        shapes->shapes[k].rank >= 0)
      y = of_dims(shapes->shapes[k].dims, t);
  }
}

// Conv2DBackpropInput(input_sizes, filter, dy) / Conv2DBackpropFilter(x, filter_sizes, dy):
// the gradient has the shape that the sizes operand names; where it is not folded, the
// forward op's known dims.
TI conv_backprop(const Args& a, bool input) {
  const TI& sizes = a[input ? 0 : 1];
  const DType t = a[2].dtype != DType::kUnknown ? a[2].dtype : a[input ? 1 : 0].dtype;
  Dims d;
  if (dims_from(sizes, &d)) return of_dims(d, t);
  if (input) return of_rank(4, t);
  const TI& f = a[1];
  return f.rank == 4 ? of_dims(f.dims, t) : of_rank(4, t);
}

bool split_into(const TI& x, int64_t axis_v, const Dims& sizes, DType t, std::vector<TI>* out) {
  const int64_t axis = axis_norm(axis_v, x.rank);
  for (size_t k = 0; k < out->size(); ++k) {
    if (axis < 0) {
      (*out)[k] = x.rank < 0 ? unknown(t) : of_rank(x.rank, t);
      continue;
    }
    Dims d = x.dims;
    d[size_t(axis)] = k < sizes.size() ? sizes[k] : -1;
    (*out)[k] = of_dims(d, t);
  }
  return true;
}

// Split's and SplitV's part sizes: equal parts, or the given ones with at most one -1.
Dims split_sizes(const TI& x, int64_t axis_v, size_t parts, const Dims* given) {
  const int64_t axis = axis_norm(axis_v, x.rank);
  const int64_t full = axis < 0 ? -1 : x.dims[size_t(axis)];
  Dims s(parts, -1);
  if (!given) {
    if (full >= 0 && parts > 0 && full % int64_t(parts) == 0)
      s.assign(parts, full / int64_t(parts));
    return s;
  }
  if (given->size() != parts) return s;
  int64_t sum = 0, minus = -1;
  for (size_t k = 0; k < parts; ++k) {
    const int64_t v = (*given)[k];
    if (v == -1 && minus < 0) {
      minus = int64_t(k);
    } else if (!dim_ok(v)) {
      return s;
    } else {
      s[k] = v, sum += v;
    }
  }
  if (minus >= 0) s[size_t(minus)] = full >= sum ? full - sum : -1;
  return s;
}

}  // namespace

bool tf_train_infer(const Args& a, std::vector<TI>* out) {
  const Node& n = a.node;
  const std::string& op = n.op;
  const TI& x = a[0];
  out->assign(1, unknown());
  TI& y = (*out)[0];

  if (op == "ShapeN") {
    const size_t count = data_inputs(a);
    const DType t = type_attr(n, "out_type", DType::kInt32);
    out->assign(std::max<size_t>(count, 1), of_rank(1, t));
    for (size_t k = 0; k < count; ++k) (*out)[k] = shape_of(a[k], t);
    return true;
  }
  if (op == "Rank" || op == "Size") {
    y = of_dims({}, op == "Rank" ? DType::kInt32 : type_attr(n, "out_type", DType::kInt32));
    const int64_t v = op == "Rank" ? x.rank : x.elements();
    if (v >= 0) y.values = {v}, y.has_values = true;
    return true;
  }
  if (op == "VariableShape") {  // the variable's shape, carried by its handle
    const TI v = x.rank >= 0 ? of_dims(x.dims, x.dtype) : unknown();
    return y = shape_of(v, type_attr(n, "out_type", DType::kInt32)), true;
  }
  if (op == "ConcatOffset") {
    // (axis, shape_0..shape_n-1) -> each part's offset in the concatenation: 0 except on
    // axis, where it is the sum of the earlier parts' sizes.
    const size_t count = data_inputs(a) > 0 ? data_inputs(a) - 1 : 0;
    out->assign(std::max<size_t>(count, 1), unknown(DType::kInt32));
    Dims axis;
    int64_t at = 0;
    for (size_t k = 0; k < count; ++k) {
      const TI& s = a[k + 1];
      TI& o = (*out)[k];
      o = s.rank == 1 ? of_dims(s.dims, s.dtype) : of_rank(1, DType::kInt32);
      Dims v;
      if (!values_of(x, &axis) || axis.size() != 1 || !values_of(s, &v) || s.rank != 1) continue;
      const int64_t ax = axis_norm(axis[0], int(v.size()));
      if (ax < 0 || at < 0) continue;
      Dims off(v.size(), 0);
      off[size_t(ax)] = at;
      at = dim_ok(v[size_t(ax)]) ? at + v[size_t(ax)] : -1;
      o.values = std::move(off), o.has_values = true;
    }
    return true;
  }
  if (op == "BroadcastGradientArgs") {
    // The axes each operand was broadcast along (summed by its gradient).
    Dims s0, s1;
    out->assign(2, of_rank(1, x.dtype));
    if (!values_of(x, &s0) || !values_of(a[1], &s1) || x.rank != 1 || a[1].rank != 1) return true;
    const size_t r = std::max(s0.size(), s1.size());
    Dims r0, r1;
    for (size_t i = 0; i < r; ++i) {
      const int64_t d0 = i + s0.size() >= r ? s0[i + s0.size() - r] : 1;
      const int64_t d1 = i + s1.size() >= r ? s1[i + s1.size() - r] : 1;
      if (d0 < 0 || d1 < 0) return true;
      if (d0 == 1 && d1 != 1) r0.push_back(int64_t(i));
      if (d1 == 1 && d0 != 1) r1.push_back(int64_t(i));
      if (d0 == 1 && d1 == 1) r0.push_back(int64_t(i)), r1.push_back(int64_t(i));
    }
    (*out)[0] = scalar_values(r0, {int64_t(r0.size())}, x.dtype);
    (*out)[1] = scalar_values(r1, {int64_t(r1.size())}, x.dtype);
    return true;
  }
  if (op == "Range") {
    const DType t = type_attr(n, "Tidx", x.dtype);
    y = of_rank(1, t);
    const TI &s = x, &l = a[1], &d = a[2];
    if (!s.has_values || !l.has_values || !d.has_values || s.values.size() != 1 ||
        l.values.size() != 1 || d.values.size() != 1 || d.values[0] == 0)
      return true;
    const int64_t st = s.values[0], lim = l.values[0], de = d.values[0];
    if (std::max({st, lim, de}) > kMaxDim || std::min({st, lim, de}) < -kMaxDim) return true;
    const int64_t cnt = std::max<int64_t>(0, (lim - st + de + (de > 0 ? -1 : 1)) / de);
    y = of_dims({cnt}, t);
    if (cnt <= int64_t(kMaxFoldedElements)) {
      for (int64_t i = 0; i < cnt; ++i) y.values.push_back(st + i * de);
      y.has_values = true;
    }
    return true;
  }
  if (op == "InvertPermutation") {
    y = x.rank < 0 ? of_rank(1, x.dtype) : of_dims(x.dims, x.dtype);
    if (!x.has_values || x.rank != 1) return true;
    Dims inv(x.values.size(), -1);
    for (size_t i = 0; i < x.values.size(); ++i) {
      const int64_t p = x.values[i];
      if (p < 0 || size_t(p) >= inv.size() || inv[size_t(p)] >= 0) return true;
      inv[size_t(p)] = int64_t(i);
    }
    return y.values = std::move(inv), y.has_values = true, true;
  }
  if (op == "Conv2DBackpropInput" || op == "DepthwiseConv2dNativeBackpropInput")
    return y = conv_backprop(a, true), true;
  if (op == "Conv2DBackpropFilter" || op == "DepthwiseConv2dNativeBackpropFilter")
    return y = conv_backprop(a, false), true;
  if (op == "MaxPoolGrad" || op == "MaxPoolGradV2") {  // (x, y, dy): x's shape
    return y = x.rank < 0 ? unknown(a[2].dtype) : of_dims(x.dims, x.dtype), true;
  }
  if (op == "AvgPoolGrad" || op == "StridedSliceGrad") {  // the shape operand names it
    const TI& g = a[op == "AvgPoolGrad" ? 1 : 4];
    Dims d;
    return y = dims_from(x, &d) ? of_dims(d, g.dtype) : unknown(g.dtype), true;
  }
  if (op.rfind("FusedBatchNormGrad", 0) == 0) {
    // (dy, x, scale, ...) -> dx (x's shape), dscale, doffset ([C]), two reserve spaces.
    const TI& xin = a[1];
    const TI& scale = a[2];
    out->assign(5,
                scale.rank == 1 ? of_dims(scale.dims, DType::kFloat) : of_rank(1, DType::kFloat));
    (*out)[0] = xin.rank < 0 ? unknown(x.dtype) : of_dims(xin.dims, x.dtype);
    (*out)[3] = of_dims({0}, DType::kFloat), (*out)[4] = of_dims({0}, DType::kFloat);
    return true;
  }
  if (op == "Split") {  // (axis, value), num_split equal parts
    const int64_t parts = std::clamp<int64_t>(n.attr_int("num_split", 1), 1, 4096);
    out->assign(size_t(parts), unknown(a[1].dtype));
    Dims axis;
    if (!values_of(x, &axis) || axis.size() != 1)
      return split_into(a[1], 1 << 30, {}, a[1].dtype, out);
    return split_into(a[1], axis[0], split_sizes(a[1], axis[0], size_t(parts), nullptr), a[1].dtype,
                      out);
  }
  if (op == "SplitV") {  // (value, size_splits, axis)
    const int64_t parts = std::clamp<int64_t>(n.attr_int("num_split", 1), 1, 4096);
    out->assign(size_t(parts), unknown(x.dtype));
    Dims axis, given;
    if (!values_of(a[2], &axis) || axis.size() != 1)
      return split_into(x, 1 << 30, {}, x.dtype, out);
    const bool known = values_of(a[1], &given);
    return split_into(x, axis[0], split_sizes(x, axis[0], size_t(parts), known ? &given : nullptr),
                      x.dtype, out);
  }
  if (op == "Unpack") {
    const int64_t num = std::clamp<int64_t>(n.attr_int("num", 1), 1, 4096);
    const int64_t axis = axis_norm(n.attr_int("axis", 0), x.rank);
    TI part = unknown(x.dtype);
    if (axis >= 0) {
      Dims d = x.dims;
      d.erase(d.begin() + axis);
      part = of_dims(d, x.dtype);
    }
    return out->assign(size_t(num), part), true;
  }

  // TensorLists: the handle describes the stacked list (see the file's first lines).
  if (op == "TensorListReserve" || op == "EmptyTensorList") {
    const DType t = type_attr(n, "element_dtype", DType::kUnknown);
    Dims len;
    const bool reserve = op == "TensorListReserve";
    const int64_t l =
        reserve && values_of(a[1], &len) && len.size() == 1 && dim_ok(len[0]) ? len[0] : -1;
    return y = list_of(l, element_shape(x, t), t), true;
  }
  if (op == "TensorListFromTensor") return y = x, y.values.clear(), y.has_values = false, true;
  if (op == "TensorListStack" || op == "TensorListGather") {
    const DType t = type_attr(n, "element_dtype", x.dtype);
    const bool gather = op == "TensorListGather";
    const TI e = element_merge(x, element_shape(a[gather ? 2 : 1], t), t);
    int64_t len = x.rank >= 1 ? x.dims[0] : -1;
    if (gather) len = a[1].rank == 1 ? a[1].dims[0] : -1;
    const int64_t given = n.attr_int("num_elements", -1);
    if (!gather && dim_ok(given)) len = given;
    return y = list_of(len, e, t), true;
  }
  if (op == "TensorListGetItem") {
    const DType t = type_attr(n, "element_dtype", x.dtype);
    return y = element_merge(x, element_shape(a[2], t), t), true;
  }
  if (op == "TensorListSetItem") {
    const TI& item = a[2];
    const int64_t len = x.rank >= 1 ? x.dims[0] : -1;
    return y = list_of(len, item.rank >= 0 ? item : element_of(x, item.dtype), item.dtype), true;
  }
  if (op == "TensorListLength") return y = of_dims({}, DType::kInt32), true;
  if (op == "TensorListElementShape") {
    const DType t = type_attr(n, "shape_type", DType::kInt32);
    return y = shape_of(element_of(x, x.dtype), t), true;
  }
  if (op == "While" || op == "StatelessWhile") return control_flow(a, 0, out), true;
  if (op == "If" || op == "StatelessIf") return control_flow(a, 1, out), true;
  return false;
}

}  // namespace pw::graph::shape
