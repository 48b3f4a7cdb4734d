// Shape rules for TensorFlow operators (tensorflow/core/ops/*.cc semantics). Data layout
// follows the node's data_format attribute (NHWC by default).
#include <algorithm>
#include <string>
#include <unordered_set>

#include "graph/shapes_ops.h"

namespace pw::graph::shape {
namespace {

using Dims = std::vector<int64_t>;

// Type attributes are DTypes already (tf_reader.cpp maps TF's numbering).
DType tf_type_attr(const Node& n, const char* name, DType dflt) {
  const Attr* a = n.attr(name);
  if (!a || a->kind != Attr::Kind::kInt || a->i < 0 || a->i > 16) return dflt;
  return static_cast<DType>(a->i);
}

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

bool nchw(const Node& n) {
  return n.attr_string("data_format", "NHWC").rfind("NC", 0) == 0;
}

int64_t window(int64_t in, int64_t k, int64_t s, int64_t d, const std::string& pad, int64_t pb,
               int64_t pe) {
  if (!dim_ok(in) || k < 1 || s < 1 || d < 1 || k > kMaxDim || s > kMaxDim || d > kMaxDim)
    return -1;
  const int64_t span = (k - 1) * d + 1;
  if (pad == "SAME") return (in + s - 1) / s;
  if (pad == "VALID") return in < span ? -1 : (in - span) / s + 1;
  if (pad == "EXPLICIT") {
    if (pb < 0 || pe < 0 || pb > kMaxDim || pe > kMaxDim || in + pb + pe < span) return -1;
    return (in + pb + pe - span) / s + 1;
  }
  return -1;
}

// Conv2D, DepthwiseConv2dNative and the pools: 4-D, layout from data_format.
TI conv2d(const Args& a, bool pool, bool depthwise) {
  const Node& n = a.node;
  const TI& x = a[0];
  const DType t = x.dtype;
  if (x.rank != 4) return of_rank(4, t);
  const bool cf = nchw(n);
  const size_t hc = cf ? 2 : 1, wc = cf ? 3 : 2, cc = cf ? 1 : 3;
  Dims k(2, -1), s = n.attr_ints("strides"), d = n.attr_ints("dilations");
  int64_t cout = -1;
  if (pool) {
    const Dims ks = n.attr_ints("ksize");
    if (ks.size() == 4) k = {ks[hc], ks[wc]};
    cout = x.dims[cc];
  } else {
    const TI& f = a[1];  // HWIO; depthwise: H W C multiplier
    if (f.rank == 4) {
      k = {f.dims[0], f.dims[1]};
      if (!depthwise)
        cout = f.dims[3];
      else if (f.dims[2] >= 0 && f.dims[3] >= 0)
        cout = f.dims[2] * f.dims[3];
    }
  }
  const std::string pad = n.attr_string("padding", "VALID");
  const Dims ep = n.attr_ints("explicit_paddings");
  Dims out(4, -1);
  out[0] = x.dims[0];
  out[cc] = cout;
  const size_t sp[2] = {hc, wc};
  for (int i = 0; i < 2; ++i) {
    const size_t ax = sp[i];
    const int64_t si = s.size() == 4 ? s[ax] : 1, di = d.size() == 4 ? d[ax] : 1;
    const int64_t pb = ep.size() == 8 ? ep[2 * ax] : 0, pe = ep.size() == 8 ? ep[2 * ax + 1] : 0;
    out[ax] = window(x.dims[ax], k[size_t(i)], si, di, pad, pb, pe);
  }
  return of_dims(out, t);
}

TI batch_matmul(const TI& a, const TI& b, bool ta, bool tb, DType t) {
  if (a.rank < 2 || b.rank < 2) return unknown(t);
  TI ab = of_dims(Dims(a.dims.begin(), a.dims.end() - 2), t);
  TI bb = of_dims(Dims(b.dims.begin(), b.dims.end() - 2), t);
  Dims out = broadcast(ab, bb).dims;
  out.push_back(a.dims[a.dims.size() - (ta ? 1 : 2)]);
  out.push_back(b.dims[b.dims.size() - (tb ? 2 : 1)]);
  return of_dims(out, t);
}

const std::unordered_set<std::string>& same_shape_ops() {
  static const std::unordered_set<std::string> s = {
      "Relu",          "Relu6",       "Elu",       "Selu",     "LeakyRelu",    "Sigmoid",
      "Tanh",          "Softplus",    "Softsign",  "Identity", "StopGradient", "Softmax",
      "LogSoftmax",    "Exp",         "Log",       "Sqrt",     "Rsqrt",        "Square",
      "Neg",           "Abs",         "Erf",       "Floor",    "Ceil",         "Round",
      "Reciprocal",    "Gelu",        "BiasAdd",   "LRN",      "Cast",         "PreventGradient",
      "CheckNumerics", "EnsureShape", "ZerosLike", "OnesLike", "Snapshot"};
  return s;
}

// Gradients of element-wise activations: (gradients, features) -> their common shape.
const std::unordered_set<std::string>& grad_ops() {
  static const std::unordered_set<std::string> s = {
      "ReluGrad", "Relu6Grad", "EluGrad",   "SeluGrad",       "LeakyReluGrad", "SigmoidGrad",
      "TanhGrad", "SqrtGrad",  "RsqrtGrad", "ReciprocalGrad", "SoftplusGrad",  "SoftsignGrad"};
  return s;
}

const std::unordered_set<std::string>& binary_ops() {
  static const std::unordered_set<std::string> s = {"Add",
                                                    "AddV2",
                                                    "Sub",
                                                    "Mul",
                                                    "RealDiv",
                                                    "Div",
                                                    "DivNoNan",
                                                    "FloorDiv",
                                                    "FloorMod",
                                                    "Maximum",
                                                    "Minimum",
                                                    "Pow",
                                                    "SquaredDifference",
                                                    "Equal",
                                                    "NotEqual",
                                                    "Less",
                                                    "Greater",
                                                    "LessEqual",
                                                    "GreaterEqual",
                                                    "LogicalAnd",
                                                    "LogicalOr",
                                                    "BiasAddV1"};
  return s;
}

}  // namespace

bool tf_infer(const Args& a, std::vector<TI>* out) {
  const Node& n = a.node;
  const std::string& op = n.op;
  const TI& x = a[0];
  out->assign(1, unknown());
  TI& y = (*out)[0];

  if (op == "Placeholder" || op == "PlaceholderWithDefault") {
    const Attr* s = n.attr("shape");
    const DType t = tf_type_attr(n, "dtype", DType::kUnknown);
    y = s && s->kind == Attr::Kind::kInts ? of_dims(s->ints, t) : unknown(t);
    if (op == "PlaceholderWithDefault" && y.rank < 0) y = of_dims(x.dims, t), y.rank = x.rank;
    return true;
  }
  if (op == "Const") {
    if (const Attr* v = n.attr("value")) y = v->tensor;
    y.constant = true;
    return true;
  }
  if (one_of(op, {"VarHandleOp", "VariableV2", "Variable"})) {
    // A resource handle is a scalar; its variable's shape rides along (ReadVariableOp and
    // ResourceGather read it), recorded as the handle's dims with constant set.
    const Attr* s = n.attr("shape");
    const DType t = tf_type_attr(n, "dtype", DType::kUnknown);
    y = s && s->kind == Attr::Kind::kInts ? of_dims(s->ints, t) : unknown(t);
    y.constant = true;
    return true;
  }
  if (op == "ReadVariableOp") {
    y = x;
    y.dtype = tf_type_attr(n, "dtype", x.dtype);
    return true;
  }
  if (op == "NoOp") return out->clear(), true;
  if (same_shape_ops().count(op)) {
    y = x.rank < 0 ? unknown(x.dtype) : of_dims(x.dims, x.dtype);
    if (op == "Cast") y.dtype = tf_type_attr(n, "DstT", DType::kUnknown);
    if ((op == "Identity" || op == "Cast" || op == "StopGradient") && x.has_values)
      y.values = x.values, y.has_values = true;
    return true;
  }
  if (binary_ops().count(op)) {
    y = broadcast(x, a[1]);
    if (one_of(op, {"Equal", "NotEqual", "Less", "Greater", "LessEqual", "GreaterEqual",
                    "LogicalAnd", "LogicalOr"}))
      y.dtype = DType::kBool;
    return true;
  }
  if (op == "AddN") {
    y = x;
    y.has_values = false, y.values.clear(), y.constant = false;
    for (size_t k = 1; k < a.size() && a.node.inputs[k][0] != '^'; ++k) y = broadcast(y, a[k]);
    return true;
  }
  if (op == "Conv2D" || op == "_MklConv2D") return y = conv2d(a, false, false), true;
  if (op == "DepthwiseConv2dNative") return y = conv2d(a, false, true), true;
  if (one_of(op, {"MaxPool", "AvgPool"})) return y = conv2d(a, true, false), true;
  if (op == "MatMul") {
    // One operand of unknown rank still tells its own side of the product.
    const TI& b = a[1];
    const bool ta = n.attr_int("transpose_a", 0) != 0, tb = n.attr_int("transpose_b", 0) != 0;
    const int64_t m = x.rank == 2 ? x.dims[ta ? 1 : 0] : -1;
    const int64_t k = b.rank == 2 ? b.dims[tb ? 0 : 1] : -1;
    return y = of_dims({m, k}, x.dtype != DType::kUnknown ? x.dtype : b.dtype), true;
  }
  if (op == "IdentityN") {  // each output is its input
    out->clear();
    for (size_t k = 0; k < a.size(); ++k)
      if (!n.inputs[k].empty() && n.inputs[k][0] != '^') out->push_back(a[k]);
    for (TI& t : *out) t.constant = false;
    if (out->empty()) out->push_back(unknown());
    return true;
  }
  if (grad_ops().count(op)) {  // ReluGrad(gradients, features) and its kin: that shape
    const TI& f = a[1];
    y = x.known() || f.rank < 0 ? x : f;
    y.has_values = false, y.values.clear(), y.constant = false;
    if (y.rank < 0) y = unknown(x.dtype != DType::kUnknown ? x.dtype : f.dtype);
    return true;
  }
  if (op == "BiasAddGrad") {
    const int64_t c = x.rank < 1 ? -1 : x.dims[nchw(n) && x.rank >= 2 ? 1 : size_t(x.rank - 1)];
    return y = x.rank < 0 ? of_rank(1, x.dtype) : of_dims({c}, x.dtype), true;
  }
  if (op == "SparseSoftmaxCrossEntropyWithLogits" || op == "SoftmaxCrossEntropyWithLogits") {
    // loss [batch], backprop: the logits' shape.
    y = x.rank == 2 ? of_dims({x.dims[0]}, x.dtype) : of_rank(1, x.dtype);
    out->push_back(x.rank == 2 ? of_dims(x.dims, x.dtype) : of_rank(2, x.dtype));
    return true;
  }
  if (op == "Slice") {  // Slice(x, begin, size): size -1 runs to the end
    std::vector<int64_t> b, sz;
    if (x.rank < 0 || !values_of(a[2], &sz) || sz.size() != size_t(x.rank))
      return y = x.rank < 0 ? unknown(x.dtype) : of_rank(x.rank, x.dtype), true;
    const bool have_b = values_of(a[1], &b) && b.size() == sz.size();
    Dims d(sz.size(), -1);
    for (size_t i = 0; i < sz.size(); ++i) {
      if (sz[i] >= 0)
        d[i] = sz[i];
      else if (sz[i] == -1 && have_b && x.dims[i] >= 0 && b[i] >= 0 && b[i] <= x.dims[i])
        d[i] = x.dims[i] - b[i];
    }
    return y = of_dims(d, x.dtype), true;
  }
  if (op == "Tile") {
    std::vector<int64_t> r;
    if (x.rank < 0 || !values_of(a[1], &r) || r.size() != size_t(x.rank))
      return y = x.rank < 0 ? unknown(x.dtype) : of_rank(x.rank, x.dtype), true;
    Dims d = x.dims;
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = d[i] < 0 || r[i] < 0 || r[i] > kMaxDim ? -1 : std::min(d[i] * r[i], kMaxDim + 1);
    return y = of_dims(d, x.dtype), true;
  }
  if (op == "BroadcastTo") {
    std::vector<int64_t> d;
    return y = values_of(a[1], &d) ? broadcast(x, of_dims(d, x.dtype)) : unknown(x.dtype), true;
  }
  if (op.rfind("BatchMatMul", 0) == 0) {
    return y = batch_matmul(x, a[1], n.attr_int("adj_x", 0) != 0, n.attr_int("adj_y", 0) != 0,
                            x.dtype),
           true;
  }
  if (op.rfind("FusedBatchNorm", 0) == 0) {
    y = x.rank < 0 ? unknown(x.dtype) : of_dims(x.dims, x.dtype);
    const int64_t c = x.rank == 4 ? x.dims[nchw(n) ? 1 : 3] : -1;
    out->resize(op == "FusedBatchNormV3" ? 6 : 5, of_dims({c}, DType::kFloat));
    return true;
  }
  if (op == "ConcatV2" || op == "Concat") {
    // ConcatV2: values..., axis (last data input); Concat: axis first.
    std::vector<size_t> data;
    for (size_t k = 0; k < a.size(); ++k)
      if (!n.inputs[k].empty() && n.inputs[k][0] != '^') data.push_back(k);
    if (data.size() < 2) return y = unknown(), true;
    const size_t ax_k = op == "ConcatV2" ? data.back() : data.front();
    std::vector<int64_t> axis;
    std::vector<const TI*> parts;
    for (size_t k : data)
      if (k != ax_k) parts.push_back(&a[k]);
    const DType t = parts[0]->dtype;
    if (!values_of(a[ax_k], &axis) || axis.size() != 1) {
      int rank = -1;
      for (const TI* p : parts) rank = std::max(rank, p->rank);
      return y = of_rank(rank, t), true;
    }
    // Same rule as ONNX Concat: reuse it through a synthetic node.
    Node m;
    m.op = "Concat";
    m.attrs.push_back(Attr{"axis", Attr::Kind::kInt, axis[0], 0, "", {}, {}, {}, {}, {}});
    std::vector<TI> in;
    for (const TI* p : parts) in.push_back(*p), m.inputs.push_back("x");
    m.outputs = {"y"};
    std::vector<TI> o;
    onnx_infer(Args{m, in}, &o);
    return y = o[0], true;
  }
  if (op == "Reshape") {
    Node m;
    m.op = "Reshape";
    m.inputs = {"x", "s"};
    m.outputs = {"y"};
    std::vector<TI> in = {x, a[1]};
    std::vector<TI> o;
    onnx_infer(Args{m, in}, &o);
    return y = o[0], true;
  }
  if (op == "Shape") {
    const DType t = tf_type_attr(n, "out_type", DType::kInt32);
    y = x.rank < 0 ? of_rank(1, t) : of_dims({x.rank}, t);
    if (x.known()) y.values = x.dims, y.has_values = true;
    return true;
  }
  if (op == "ExpandDims" || op == "Squeeze" || op == "Transpose") {
    Node m;
    m.outputs = {"y"};
    std::vector<TI> in = {x};
    m.inputs = {"x"};
    if (op == "ExpandDims") {
      std::vector<int64_t> d;
      if (!values_of(a[1], &d) || d.size() != 1)
        return y = of_rank(x.rank < 0 ? -1 : x.rank + 1, x.dtype), true;
      m.op = "Unsqueeze";
      m.attrs.push_back(Attr{"axes", Attr::Kind::kInts, 0, 0, "", d, {}, {}, {}, {}});
    } else if (op == "Squeeze") {
      m.op = "Squeeze";
      const Dims sd = n.attr_ints("squeeze_dims");
      if (!sd.empty())
        m.attrs.push_back(Attr{"axes", Attr::Kind::kInts, 0, 0, "", sd, {}, {}, {}, {}});
    } else {
      std::vector<int64_t> perm;
      if (!values_of(a[1], &perm)) return y = of_rank(x.rank, x.dtype), true;
      m.op = "Transpose";
      m.attrs.push_back(Attr{"perm", Attr::Kind::kInts, 0, 0, "", perm, {}, {}, {}, {}});
    }
    std::vector<TI> o;
    onnx_infer(Args{m, in}, &o);
    return y = o[0], true;
  }
  if (one_of(op, {"Mean", "Sum", "Max", "Min", "Prod"})) {
    std::vector<int64_t> axes;
    if (!values_of(a[1], &axes)) return y = unknown(x.dtype), true;
    Node m;
    m.op = "ReduceMean";
    m.inputs = {"x"};
    m.outputs = {"y"};
    m.attrs.push_back(Attr{"axes", Attr::Kind::kInts, 0, 0, "", axes, {}, {}, {}, {}});
    m.attrs.push_back(
        Attr{"keepdims", Attr::Kind::kInt, n.attr_int("keep_dims", 0), 0, "", {}, {}, {}, {}, {}});
    std::vector<TI> in = {x};
    std::vector<TI> o;
    onnx_infer(Args{m, in}, &o);
    return y = o[0], true;
  }
  if (op == "GatherV2" || op == "Gather" || op == "ResourceGather") {
    std::vector<int64_t> axis = {0};
    if (op == "GatherV2" && !values_of(a[2], &axis)) return y = unknown(x.dtype), true;
    if (axis.size() != 1 || n.attr_int("batch_dims", 0) != 0) return y = unknown(x.dtype), true;
    TI data = x;
    if (op == "ResourceGather") data.dtype = tf_type_attr(n, "dtype", x.dtype);
    Node m;
    m.op = "Gather";
    m.inputs = {"x", "i"};
    m.outputs = {"y"};
    m.attrs.push_back(Attr{"axis", Attr::Kind::kInt, axis[0], 0, "", {}, {}, {}, {}, {}});
    std::vector<TI> in = {data, a[1]};
    std::vector<TI> o;
    onnx_infer(Args{m, in}, &o);
    return y = o[0], true;
  }
  if (op.rfind("SparseSegment", 0) == 0) {
    // data, indices, segment_ids[, num_segments]: [num_segments or unknown] + data[1:].
    if (x.rank < 1) return y = unknown(x.dtype), true;
    Dims d = x.dims;
    std::vector<int64_t> ns;
    d[0] = op.find("WithNumSegments") != std::string::npos && values_of(a[3], &ns) && ns.size() == 1
               ? ns[0]
               : -1;
    return y = of_dims(d, x.dtype), true;
  }
  if (op == "Pack") {
    int count = 0;
    for (size_t k = 0; k < a.size(); ++k) count += !n.inputs[k].empty() && n.inputs[k][0] != '^';
    if (x.rank < 0 || x.rank + 1 > kMaxRank) return y = unknown(x.dtype), true;
    int64_t axis = n.attr_int("axis", 0);
    if (axis < 0) axis += x.rank + 1;
    if (axis < 0 || axis > x.rank) return y = unknown(x.dtype), true;
    Dims d = x.dims;
    d.insert(d.begin() + axis, count);
    y = of_dims(d, x.dtype);
    if (x.rank == 0) {
      std::vector<int64_t> v;
      for (size_t k = 0; k < a.size(); ++k) {
        if (n.inputs[k].empty() || n.inputs[k][0] == '^') continue;
        if (!a[k].has_values || a[k].values.size() != 1) return true;
        v.push_back(a[k].values[0]);
      }
      y.values = std::move(v), y.has_values = true;
    }
    return true;
  }
  if (op == "StridedSlice") {
    // begin, end, strides (1-D constants) with the masks; ellipsis and new axes: unknown.
    std::vector<int64_t> bg, en, st;
    if (x.rank < 0 || !values_of(a[1], &bg) || !values_of(a[2], &en) || !values_of(a[3], &st) ||
        bg.size() != en.size() || bg.size() != st.size() || bg.size() > size_t(x.rank) ||
        n.attr_int("ellipsis_mask", 0) || n.attr_int("new_axis_mask", 0))
      return y = unknown(x.dtype), true;
    const int64_t bm = n.attr_int("begin_mask", 0), em = n.attr_int("end_mask", 0);
    const int64_t sm = n.attr_int("shrink_axis_mask", 0);
    Dims d;
    // A shape vector's slice keeps its values (Keras reads a variable's dims this way):
    // the first index, the step and the count along its one axis.
    int64_t first = -1, step = 0, count = -1;
    bool shrunk = false;
    for (size_t i = 0; i < size_t(x.rank); ++i) {
      const int64_t dim = x.dims[i];
      if (i >= bg.size()) {
        d.push_back(dim);
        continue;
      }
      if (i < 63 && ((sm >> i) & 1)) {  // a single index: the dim goes
        const int64_t at = bg[i] < 0 ? bg[i] + dim : bg[i];
        if (dim >= 0 && at >= 0 && at < dim) first = at, step = 1, count = 1, shrunk = true;
        continue;
      }
      const int64_t s = st[i];
      if (dim < 0 || s == 0 || s < -kMaxDim || s > kMaxDim) {
        d.push_back(-1);
        continue;
      }
      auto clamp = [&](int64_t v, bool masked, bool is_begin) {
        if (masked) return s > 0 ? (is_begin ? int64_t{0} : dim) : (is_begin ? dim - 1 : -1);
        if (v < 0) v = v < -dim ? (s > 0 ? 0 : -1) : v + dim;
        return s > 0 ? std::min(std::max<int64_t>(v, 0), dim)
                     : std::min(std::max<int64_t>(v, -1), dim - 1);
      };
      const bool mb = i < 63 && ((bm >> i) & 1), me = i < 63 && ((em >> i) & 1);
      const int64_t b = clamp(bg[i], mb, true), e = clamp(en[i], me, false);
      int64_t cnt = 0;
      if (s > 0 && e > b) cnt = (e - b + s - 1) / s;
      if (s < 0 && b > e) cnt = (b - e - s - 1) / -s;
      d.push_back(cnt);
      first = b, step = s, count = cnt;
    }
    y = of_dims(d, x.dtype);
    if (x.rank == 1 && x.has_values && first >= 0 && count >= 0) {
      Dims v;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t at = first + i * step;
        if (at < 0 || size_t(at) >= x.values.size()) return true;
        v.push_back(x.values[size_t(at)]);
      }
      if (int64_t(v.size()) == y.elements() || (shrunk && v.size() == 1))
        y.values = std::move(v), y.has_values = true;
    }
    return true;
  }
  if (op == "UnsortedSegmentSum" || op == "UnsortedSegmentMax" || op == "UnsortedSegmentMean") {
    std::vector<int64_t> ns;
    const TI& ids = a[1];
    if (x.rank < 0 || ids.rank < 0 || ids.rank > x.rank) return y = unknown(x.dtype), true;
    Dims d = {values_of(a[2], &ns) && ns.size() == 1 ? ns[0] : -1};
    d.insert(d.end(), x.dims.begin() + ids.rank, x.dims.end());
    return y = of_dims(d, x.dtype), true;
  }
  if (op == "SelectV2") {
    y = broadcast(broadcast(x, a[1]), a[2]);
    y.dtype = a[1].dtype;
    return true;
  }
  if (op == "Select") {
    y = a[1].rank < 0 ? unknown(a[1].dtype) : of_dims(a[1].dims, a[1].dtype);
    return true;
  }
  if (op == "Fill") {
    std::vector<int64_t> d;
    return y = values_of(x, &d) ? of_dims(d, a[1].dtype) : unknown(a[1].dtype), true;
  }
  if (op == "Pad" || op == "PadV2" || op == "MirrorPad") {
    const TI& p = a[1];
    if (x.rank < 0 || !p.has_values || p.values.size() != 2 * size_t(x.rank))
      return y = x.rank < 0 ? unknown(x.dtype) : of_rank(x.rank, x.dtype), true;
    Dims d = x.dims;
    for (size_t i = 0; i < d.size(); ++i) {
      const int64_t pb = p.values[2 * i], pe = p.values[2 * i + 1];
      d[i] = d[i] < 0 || pb < 0 || pe < 0 || pb > kMaxDim || pe > kMaxDim ? -1 : d[i] + pb + pe;
    }
    return y = of_dims(d, x.dtype), true;
  }
  return tf_train_infer(a, out);
}

}  // namespace pw::graph::shape
