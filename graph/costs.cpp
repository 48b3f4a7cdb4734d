// node_cost: FLOPs and bytes of one operator from its inferred shapes. The table of what
// each op costs is in graph/README.md ("Costs per operator"); keep the two in step.
#include <cmath>
#include <set>
#include <string>

#include "graph/graph.h"

namespace pw::graph {
namespace {

double el(const TensorInfo& t) {
  const int64_t e = t.elements();
  return e < 0 ? -1.0 : double(e);
}

double nbytes(const TensorInfo& t) {
  const double e = el(t);
  return e < 0 ? -1.0 : e * dtype_size(t.dtype);
}

// Product of dims [from, to); -1 when one is unknown.
double prod(const TensorInfo& t, int from, int to) {
  if (t.rank < 0 || from < 0 || to > t.rank) return -1;
  double p = 1;
  for (int i = from; i < to; ++i) {
    if (t.dims[size_t(i)] < 0) return -1;
    p *= double(t.dims[size_t(i)]);
  }
  return p;
}

double both(double a, double b) {
  return a < 0 || b < 0 ? -1 : a * b;
}

bool in_set(const std::string& op, const std::set<std::string>& s) {
  return s.count(op) > 0;
}

// Ops that move no data (views, metadata, constants): 0 FLOPs and 0 bytes.
const std::set<std::string>& views() {
  static const std::set<std::string> s = {"Identity",
                                          "Dropout",
                                          "Reshape",
                                          "Flatten",
                                          "Squeeze",
                                          "Unsqueeze",
                                          "Constant",
                                          "Shape",
                                          "Size",
                                          "Const",
                                          "Placeholder",
                                          "PlaceholderWithDefault",
                                          "VarHandleOp",
                                          "VariableV2",
                                          "Variable",
                                          "ReadVariableOp",
                                          "StopGradient",
                                          "ExpandDims",
                                          "NoOp",
                                          "Snapshot",
                                          "PreventGradient",
                                          "CheckNumerics",
                                          "EnsureShape",
                                          "ShapeN",
                                          "Rank",
                                          "VariableShape",
                                          "ConcatOffset",
                                          "BroadcastGradientArgs",
                                          "InvertPermutation",
                                          "TensorListReserve",
                                          "EmptyTensorList",
                                          "TensorListLength",
                                          "TensorListElementShape"};
  return s;
}

// Control flow: what runs is in another function (the loop's body, the branches), which
// tf_reader.cpp never inlines, so its cost is unknown here.
const std::set<std::string>& calls() {
  static const std::set<std::string> s = {"While", "StatelessWhile", "If", "StatelessIf"};
  return s;
}

// Ops that copy data but compute nothing: 0 FLOPs, bytes read + written.
const std::set<std::string>& copies() {
  static const std::set<std::string> s = {"Concat",
                                          "ConcatV2",
                                          "Split",
                                          "Slice",
                                          "Pad",
                                          "PadV2",
                                          "MirrorPad",
                                          "Expand",
                                          "Tile",
                                          "Transpose",
                                          "Cast",
                                          "CastLike",
                                          "ConstantOfShape",
                                          "Range",
                                          "ScatterND",
                                          "StridedSlice",
                                          "ScatterElements",
                                          "Scatter",
                                          "OneHot",
                                          "NonZero",
                                          "Pack",
                                          "Fill",
                                          "ZerosLike",
                                          "OnesLike",
                                          "SplitV",
                                          "Unpack",
                                          "StridedSliceGrad",
                                          "TensorListFromTensor",
                                          "TensorListStack",
                                          "TensorListGather",
                                          "TensorListGetItem",
                                          "TensorListSetItem"};
  return s;
}

const std::set<std::string>& norms() {
  static const std::set<std::string> s = {"LayerNormalization", "InstanceNormalization",
                                          "MeanVarianceNormalization", "LpNormalization", "LRN"};
  return s;
}

double onnx_flops(const Node& n, const std::vector<TensorInfo>& in, const TensorInfo& y) {
  const std::string& op = n.op;
  auto at = [&](size_t k) -> const TensorInfo& {
    static const TensorInfo kNone;
    return k < in.size() ? in[k] : kNone;
  };
  auto has = [&](size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); };
  const double ny = el(y);
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const TensorInfo& w = at(op == "QLinearConv" ? 3 : 1);
    const double f = 2 * both(ny, prod(w, 1, w.rank));
    const bool bias = op == "QLinearConv" ? has(8) : op == "Conv" && has(2);
    return f < 0 ? -1 : f + (bias ? ny : 0);
  }
  if (op == "ConvTranspose") {
    const TensorInfo& w = at(1);
    const double f = 2 * both(el(at(0)), prod(w, 1, w.rank));
    return f < 0 || ny < 0 ? -1 : f + (has(2) ? ny : 0);
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const TensorInfo& a = at(0);
    if (a.rank < 1) return -1;
    return 2 * both(ny, double(a.dims.back() < 0 ? -1 : a.dims.back()));
  }
  if (op == "Gemm") {
    const TensorInfo& a = at(0);
    if (a.rank != 2) return -1;
    const int64_t k = a.dims[n.attr_int("transA", 0) ? 0 : 1];
    const double f = 2 * both(ny, k < 0 ? -1 : double(k));
    return f < 0 ? -1 : f + (has(2) ? ny : 0);
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    double k = 1;
    for (int64_t d : n.attr_ints("kernel_shape")) k *= d > 0 ? double(d) : -1e300;
    return k <= 0 ? -1 : both(ny, k);
  }
  if (op.rfind("Global", 0) == 0 || op.rfind("Reduce", 0) == 0 || op == "ArgMax" ||
      op == "ArgMin" || op == "CumSum" || op == "TopK" || op == "Hardmax")
    return el(at(0));
  if (op == "BatchNormalization") return 2 * el(at(0)) < 0 ? -1 : 2 * el(at(0));
  if (in_set(op, norms())) return el(at(0)) < 0 ? -1 : 5 * el(at(0));
  if (op == "Softmax" || op == "LogSoftmax") return ny < 0 ? -1 : 3 * ny;
  if (op == "Gather" || op == "GatherElements" || op == "GatherND") return ny;
  if (op == "Sum" || op == "Mean" || op == "Max" || op == "Min") {
    const double k = double(n.inputs.size() > 1 ? n.inputs.size() - 1 : 1);
    return ny < 0 ? -1 : k * ny;
  }
  return ny;  // element-wise (unary, binary, Where, Clip, activations): one per output
}

double tf_flops(const Node& n, const std::vector<TensorInfo>& in, const TensorInfo& y) {
  const std::string& op = n.op;
  auto at = [&](size_t k) -> const TensorInfo& {
    static const TensorInfo kNone;
    return k < in.size() ? in[k] : kNone;
  };
  const double ny = el(y);
  if (op == "Conv2D" || op == "_MklConv2D") return 2 * both(ny, prod(at(1), 0, 3));  // kh kw cin
  if (op == "DepthwiseConv2dNative") return 2 * both(ny, prod(at(1), 0, 2));
  // A convolution's gradients cost what it costs: each output gradient meets every kernel
  // element it came from. Filter HWIO (depthwise: H W C multiplier), from the filter
  // operand (input gradient) or the result's shape (filter gradient).
  if (op == "Conv2DBackpropInput") return 2 * both(el(at(2)), prod(at(1), 0, 3));
  if (op == "Conv2DBackpropFilter") return 2 * both(el(at(2)), prod(y, 0, 3));
  if (op == "DepthwiseConv2dNativeBackpropInput") return 2 * both(el(at(2)), prod(at(1), 0, 2));
  if (op == "DepthwiseConv2dNativeBackpropFilter") return 2 * both(el(at(2)), prod(y, 0, 2));
  if (op == "MaxPoolGrad" || op == "AvgPoolGrad") {  // each output gradient to its window
    double k = 1;
    for (int64_t d : n.attr_ints("ksize")) k *= d > 0 ? double(d) : -1e300;
    return k <= 0 ? -1 : both(el(at(op == "MaxPoolGrad" ? 2 : 1)), k);
  }
  if (op.rfind("FusedBatchNormGrad", 0) == 0) return el(at(1)) < 0 ? -1 : 5 * el(at(1));
  if (op == "BiasAddGrad") return el(at(0));  // a sum over all but the channels
  if (op == "MatMul") {
    const TensorInfo& a = at(0);
    if (a.rank != 2) return -1;
    const int64_t k = a.dims[n.attr_int("transpose_a", 0) ? 0 : 1];
    return 2 * both(ny, k < 0 ? -1 : double(k));
  }
  if (op.rfind("BatchMatMul", 0) == 0) {
    const TensorInfo& a = at(0);
    if (a.rank < 2) return -1;
    const int64_t k = a.dims[a.dims.size() - (n.attr_int("adj_x", 0) ? 2 : 1)];
    return 2 * both(ny, k < 0 ? -1 : double(k));
  }
  if (op == "MaxPool" || op == "AvgPool") {
    double k = 1;
    for (int64_t d : n.attr_ints("ksize")) k *= d > 0 ? double(d) : -1e300;
    return k <= 0 ? -1 : both(ny, k);
  }
  if (op.rfind("FusedBatchNorm", 0) == 0) return el(at(0)) < 0 ? -1 : 2 * el(at(0));
  if (op == "Softmax" || op == "LogSoftmax") return ny < 0 ? -1 : 3 * ny;
  if (op == "Mean" || op == "Sum" || op == "Max" || op == "Min" || op == "Prod") return el(at(0));
  if (op == "GatherV2" || op == "Gather" || op == "ResourceGather") return ny;
  if (op.rfind("SparseSegment", 0) == 0) {  // rows gathered and summed
    const TensorInfo& x = at(0);
    return both(el(at(1)), prod(x, 1, x.rank));
  }
  if (op == "AddN") {
    double k = 0;
    for (const std::string& i : n.inputs) k += !i.empty() && i[0] != '^';
    return ny < 0 ? -1 : (k - 1) * ny;
  }
  return ny;
}

}  // namespace

void node_cost(const Node& node, Format format, const std::vector<TensorInfo>& in, double* flops,
               double* bytes) {
  *flops = -1;
  *bytes = -1;
  const std::string& op = node.op;
  if (in_set(op, views())) {
    *flops = 0, *bytes = 0;
    return;
  }
  if (in_set(op, calls())) return;
  static const TensorInfo kNone;
  const TensorInfo& y = node.out.empty() ? kNone : node.out[0];
  const bool tf = format_is_tf(format);
  double f = 0;
  if (!in_set(op, copies())) f = tf ? tf_flops(node, in, y) : onnx_flops(node, in, y);
  *flops = f < 0 || !std::isfinite(f) ? -1 : f;

  // Bytes: every data input read whole and every output written, except the gathers,
  // which read only the rows they copy.
  const bool gather =
      op.rfind("Gather", 0) == 0 || op == "ResourceGather" || op.rfind("SparseSegment", 0) == 0;
  double b = 0;
  for (size_t k = 0; k < in.size() && k < node.inputs.size(); ++k) {
    const std::string& name = node.inputs[k];
    if (name.empty() || name[0] == '^') continue;
    if (gather && k == 0) continue;  // counted as the output's size below
    const double x = nbytes(in[k]);
    if (x < 0) return;
    b += x;
  }
  for (const TensorInfo& o : node.out) {
    const double x = nbytes(o);
    if (x < 0) return;
    b += gather ? 2 * x : x;
  }
  *bytes = std::isfinite(b) ? b : -1;
}

}  // namespace pw::graph
