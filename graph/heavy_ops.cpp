// The heavy-operator table (docs/design.md), one row per op or op family.
#include "graph/heavy_ops.h"

namespace pw::graph {
namespace {

constexpr Framework O = Framework::kOnnx;
constexpr Framework T = Framework::kTf;
constexpr HeavyRule A = HeavyRule::kAlways;
constexpr HeavyRule C = HeavyRule::kConstOperand0;

// clang-format off
constexpr HeavyOp kTable[] = {
    // ONNX: convolution, matmul, recurrent, attention.
    {O, "Conv", false, A}, {O, "ConvTranspose", false, A}, {O, "ConvInteger", false, A},
    {O, "QLinearConv", false, A}, {O, "MatMul", false, A}, {O, "MatMulInteger", false, A},
    {O, "QLinearMatMul", false, A}, {O, "Gemm", false, A}, {O, "Einsum", false, A},
    {O, "LSTM", false, A}, {O, "GRU", false, A}, {O, "RNN", false, A},
    {O, "Attention", false, A}, {O, "MultiHeadAttention", false, A},
    // ONNX embedding lookups: a Gather whose data operand is an initializer/Constant.
    {O, "Gather", false, C}, {O, "GatherND", false, C}, {O, "GatherElements", false, C},
    // TF convolution family.
    {T, "Conv2D", false, A}, {T, "Conv3D", false, A}, {T, "Conv", false, A},
    {T, "DepthwiseConv2dNative", false, A},
    {T, "Conv2DBackprop", true, A}, {T, "Conv3DBackprop", true, A},
    {T, "DepthwiseConv2dNativeBackprop", true, A},
    {T, "_FusedConv2D", false, A}, {T, "_FusedConv3D", false, A},
    {T, "_FusedDepthwiseConv2dNative", false, A},
    {T, "_MklConv", true, A}, {T, "_MklNativeConv", true, A}, {T, "_MklFusedConv", true, A},
    {T, "_MklNativeFusedConv", true, A}, {T, "_MklDepthwiseConv", true, A},
    {T, "_MklFusedDepthwiseConv", true, A}, {T, "_MklNativeFusedDepthwiseConv", true, A},
    // TF matmul family.
    {T, "MatMul", false, A}, {T, "BatchMatMul", true, A}, {T, "_FusedMatMul", false, A},
    {T, "_FusedBatchMatMul", true, A}, {T, "_MklMatMul", true, A},
    {T, "_MklFusedMatMul", true, A}, {T, "_MklNativeFusedMatMul", true, A},
    {T, "_MklBatchMatMul", true, A}, {T, "Einsum", false, A},
    // TF recurrent blocks.
    {T, "BlockLSTM", true, A}, {T, "CudnnRNN", true, A}, {T, "LSTMBlockCell", false, A},
    {T, "GRUBlockCell", false, A},
    // TF embedding lookups.
    {T, "ResourceGather", false, A}, {T, "Gather", false, C}, {T, "GatherV2", false, C},
    {T, "SparseSegmentSum", true, A}, {T, "SparseSegmentMean", true, A},
    {T, "SparseSegmentSqrtN", true, A},
};
// clang-format on

bool matches(const HeavyOp& e, std::string_view op) {
  if (e.prefix) return op.substr(0, e.name.size()) == e.name;
  return op == e.name;
}

}  // namespace

const HeavyOp* heavy_ops_table(size_t* count) {
  *count = sizeof(kTable) / sizeof(kTable[0]);
  return kTable;
}

const HeavyOp* heavy_op_find(Framework framework, std::string_view op) {
  // Exact entries first so that a prefix row never shadows a more specific exact row.
  for (const HeavyOp& e : kTable)
    if (e.framework == framework && !e.prefix && matches(e, op)) return &e;
  for (const HeavyOp& e : kTable)
    if (e.framework == framework && e.prefix && matches(e, op)) return &e;
  return nullptr;
}

bool tf_is_param_source(std::string_view op) {
  return op == "Const" || op == "HostConst" || op == "VariableV2" || op == "Variable" ||
         op == "VarHandleOp" || op == "ReadVariableOp" || op == "_ReadVariablesOp";
}

}  // namespace pw::graph
