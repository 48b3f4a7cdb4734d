// shapes_infer and node costs against hand-computed values: convolution arithmetic
// (strides, padding, auto_pad, groups, dilation), pooling with ceil_mode, batched MatMul,
// numpy broadcasting, the folded Shape->Gather->Concat->Reshape chains of torch exports, TF
// NHWC ops, unknown operators, and hostile dims. Graphs are built in code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/report.h"
#include "graph/graph.h"
#include "tests/unit/graph/shape_builder.h"
#include "tests/unit/graph/test_util.h"

namespace pw::graph {
namespace {

using namespace test;  // NOLINT: the graph builder

// ---------------------------------------------------------------- convolution

TEST(Shapes, ConvStridePadBias) {
  // ResNet's stem: 224 -> (224 + 3 + 3 - 7) / 2 + 1 = 112.
  Builder b;
  b.input("x", {1, 3, 224, 224});
  b.weight("w", {64, 3, 7, 7});
  b.weight("b", {64});
  b.node("Conv", {"x", "w", "b"}, {"y"},
         {ais("kernel_shape", {7, 7}), ais("strides", {2, 2}), ais("pads", {3, 3, 3, 3})});
  b.run();
  EXPECT_EQ(dims(b.last()), (Dims{1, 64, 112, 112}));
  // 2 * |Y| * (3 * 7 * 7) + |Y| for the bias.
  const double y = 64.0 * 112 * 112;
  EXPECT_DOUBLE_EQ(b.last().flops, 2 * y * 147 + y);
  // Bytes: x, w, b read; y written; all float.
  EXPECT_DOUBLE_EQ(b.last().bytes, 4.0 * (3 * 224 * 224 + 64 * 147 + 64 + y));
}

TEST(Shapes, ConvGroupsAndDilation) {
  // Depthwise 3x3, dilation 2: span 5, 20 -> 16. Kernel from the weight (no attribute).
  Builder b;
  b.input("x", {1, 32, 20, 20});
  b.weight("w", {32, 1, 3, 3});
  b.node("Conv", {"x", "w"}, {"y"}, {ai("group", 32), ais("dilations", {2, 2})});
  b.run();
  EXPECT_EQ(dims(b.last()), (Dims{1, 32, 16, 16}));
  EXPECT_DOUBLE_EQ(b.last().flops, 2.0 * 32 * 16 * 16 * 9);  // 1 input channel per group
}

TEST(Shapes, ConvAutoPadAndAsymmetricPads) {
  Builder b;
  b.input("x", {1, 2, 15, 15});
  b.weight("w", {4, 2, 3, 3});
  b.node("Conv", {"x", "w"}, {"same"},
         {ai("group", 1), as("auto_pad", "SAME_UPPER"), ais("strides", {2, 2})});
  b.node("Conv", {"x", "w"}, {"lower"}, {as("auto_pad", "SAME_LOWER"), ais("strides", {2, 2})});
  b.node("Conv", {"x", "w"}, {"valid"}, {as("auto_pad", "VALID"), ais("strides", {2, 2})});
  // pads begin 0, end 2 on H; 1 and 1 on W: H (15+2-3)/1+1 = 15, W (15+2-3)/1+1 = 15 ...
  b.node("Conv", {"x", "w"}, {"asym"}, {ais("pads", {0, 1, 2, 1}), ais("strides", {1, 3})});
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{1, 4, 8, 8}));  // ceil(15 / 2)
  EXPECT_EQ(dims(b.at(1)), (Dims{1, 4, 8, 8}));
  EXPECT_EQ(dims(b.at(2)), (Dims{1, 4, 7, 7}));   // (15 - 3) / 2 + 1
  EXPECT_EQ(dims(b.at(3)), (Dims{1, 4, 15, 5}));  // W: (15 + 2 - 3) / 3 + 1 = 5
}

TEST(Shapes, ConvTransposeGroupsOutputPadding) {
  // out = stride * (in - 1) + output_padding + kernel - pads = 2*9 + 1 + 3 - 2 = 20.
  Builder b;
  b.input("x", {1, 8, 10, 10});
  b.weight("w", {8, 4, 3, 3});
  b.node("ConvTranspose", {"x", "w"}, {"y"},
         {ai("group", 2), ais("strides", {2, 2}), ais("pads", {1, 1, 1, 1}),
          ais("output_padding", {1, 1})});
  b.run();
  EXPECT_EQ(dims(b.last()), (Dims{1, 8, 20, 20}));   // W[1] * group channels
  EXPECT_DOUBLE_EQ(b.last().flops, 2.0 * 800 * 36);  // 2 * |X| * |W[1:]|
}

TEST(Shapes, PoolingCeilModeAndGlobal) {
  Builder b;
  b.input("x", {1, 1, 6, 6});
  b.input("z", {1, 1, 5, 5});
  b.node("MaxPool", {"x"}, {"c"},
         {ais("kernel_shape", {3, 3}), ais("strides", {2, 2}), ai("ceil_mode", 1)});
  b.node("MaxPool", {"x"}, {"f"}, {ais("kernel_shape", {3, 3}), ais("strides", {2, 2})});
  // 5 padded to 7, kernel 2 stride 2: ceil gives 4 windows but the last starts in the
  // padding, so 3.
  b.node("AveragePool", {"z"}, {"p"},
         {ais("kernel_shape", {2, 2}), ais("strides", {2, 2}), ais("pads", {1, 1, 1, 1}),
          ai("ceil_mode", 1)});
  b.node("GlobalAveragePool", {"x"}, {"g"});
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{1, 1, 3, 3}));  // ceil(3/2) + 1
  EXPECT_EQ(dims(b.at(1)), (Dims{1, 1, 2, 2}));  // floor(3/2) + 1
  EXPECT_EQ(dims(b.at(2)), (Dims{1, 1, 3, 3}));
  EXPECT_EQ(dims(b.at(3)), (Dims{1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(b.at(0).flops, 9.0 * 9);  // |Y| * kernel elements
  EXPECT_DOUBLE_EQ(b.at(3).flops, 36.0);     // |X|
}

// ---------------------------------------------------------------- matrix products

TEST(Shapes, MatMulBatchedBroadcastAndVectors) {
  Builder b;
  b.input("a", {2, 1, 4, 5});
  b.input("b", {3, 5, 6});
  b.input("v", {5});
  b.node("MatMul", {"a", "b"}, {"y"});
  b.node("MatMul", {"v", "b"}, {"vy"});  // 1-D left operand: its dim is dropped
  b.node("MatMul", {"a", "v"}, {"av"});  // 1-D right operand
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{2, 3, 4, 6}));
  EXPECT_DOUBLE_EQ(b.at(0).flops, 2.0 * 144 * 5);
  EXPECT_EQ(dims(b.at(1)), (Dims{3, 6}));
  EXPECT_EQ(dims(b.at(2)), (Dims{2, 1, 4}));
}

TEST(Shapes, GemmTransposesAndBias) {
  Builder b;
  b.input("a", {5, 4});
  b.weight("w", {6, 5});
  b.weight("c", {6});
  b.node("Gemm", {"a", "w", "c"}, {"y"}, {ai("transA", 1), ai("transB", 1)});
  b.run();
  EXPECT_EQ(dims(b.last()), (Dims{4, 6}));
  EXPECT_DOUBLE_EQ(b.last().flops, 2.0 * 24 * 5 + 24);
}

// ---------------------------------------------------------------- element-wise

TEST(Shapes, NumpyBroadcasting) {
  Builder b;
  b.input("a", {8, 1, 6, 1});
  b.input("b", {7, 1, 5});
  b.input("u", {-1, 3});  // a symbolic batch: becomes 1 (with a warning)
  b.input("s", {});       // a scalar
  b.node("Add", {"a", "b"}, {"y"});
  b.node("Mul", {"a", "s"}, {"ys"});
  b.node("Less", {"a", "b"}, {"yl"});
  b.node("Sum", {"a", "b", "s"}, {"y3"});
  auto w = b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{8, 7, 6, 5}));
  EXPECT_DOUBLE_EQ(b.at(0).flops, 8.0 * 7 * 6 * 5);
  EXPECT_EQ(dims(b.at(1)), (Dims{8, 1, 6, 1}));
  EXPECT_EQ(b.at(2).out[0].dtype, DType::kBool);
  EXPECT_DOUBLE_EQ(b.at(3).flops, 2.0 * 8 * 7 * 6 * 5);  // 3 inputs: 2 adds per element
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("'u' dim 0"), std::string::npos) << w[0];
}

TEST(Shapes, UnknownDimsAreNotGuessed) {
  // A dim that is unknown stays unknown unless the other side decides it (not 1).
  Builder b;
  b.input("x", {2, 3});
  b.node("FancyOp", {"x"}, {"u"});  // no rule: rank unknown
  b.weight("k", {3});
  b.node("Add", {"u", "k"}, {"y"});
  b.run();
  EXPECT_EQ(b.last().out[0].rank, -1);
  EXPECT_LT(b.last().flops, 0);
  EXPECT_LT(b.last().bytes, 0);
}

TEST(Shapes, NormalisationsSoftmaxAndTheirCosts) {
  Builder b;
  b.input("x", {2, 4, 3, 3});
  b.weight("g", {4});
  b.node("BatchNormalization", {"x", "g", "g", "g", "g"}, {"bn"});
  b.node("LayerNormalization", {"x", "g"}, {"ln"}, {ai("axis", -1)});
  b.node("Softmax", {"x"}, {"sm"}, {ai("axis", -1)});
  b.node("Relu", {"x"}, {"r"});
  b.node("Clip", {"x"}, {"c"});
  b.run();
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(dims(b.at(i)), (Dims{2, 4, 3, 3}));
  EXPECT_DOUBLE_EQ(b.at(0).flops, 2.0 * 72);
  EXPECT_DOUBLE_EQ(b.at(1).flops, 5.0 * 72);
  EXPECT_DOUBLE_EQ(b.at(2).flops, 3.0 * 72);
  EXPECT_DOUBLE_EQ(b.at(3).flops, 72.0);
  EXPECT_DOUBLE_EQ(b.at(4).flops, 72.0);
}

// ---------------------------------------------------------------- layout ops and folding

TEST(Shapes, LayoutOps) {
  Builder b;
  b.input("x", {2, 3, 4});
  b.ints("axes0", {0});
  b.ints("starts", {1});
  b.ints("ends", {-1});
  b.ints("sl_axes", {2});
  b.node("Transpose", {"x"}, {"t"}, {ais("perm", {2, 0, 1})});
  b.node("Unsqueeze", {"x", "axes0"}, {"u"});           // opset 13: axes as an input
  b.node("Squeeze", {"u"}, {"s"}, {ais("axes", {0})});  // opset 11: attribute
  b.node("Slice", {"x", "starts", "ends", "sl_axes"}, {"sl"});
  b.node("Flatten", {"x"}, {"f"}, {ai("axis", 2)});
  b.node("Split", {"x"}, {"p0", "p1", "p2"}, {ai("axis", 1)});
  b.node("Concat", {"x", "x"}, {"c"}, {ai("axis", -1)});
  b.node("Transpose", {"x"}, {"td"});  // default: reversed
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{4, 2, 3}));
  EXPECT_EQ(dims(b.at(1)), (Dims{1, 2, 3, 4}));
  EXPECT_EQ(dims(b.at(2)), (Dims{2, 3, 4}));
  EXPECT_EQ(dims(b.at(3)), (Dims{2, 3, 2}));  // 1 .. 4-1
  EXPECT_EQ(dims(b.at(4)), (Dims{6, 4}));
  EXPECT_EQ(dims(b.at(5), 2), (Dims{2, 1, 4}));
  EXPECT_EQ(dims(b.at(6)), (Dims{2, 3, 8}));
  EXPECT_EQ(dims(b.at(7)), (Dims{4, 3, 2}));
  EXPECT_DOUBLE_EQ(b.at(2).flops, 0.0);  // a view
  EXPECT_DOUBLE_EQ(b.at(2).bytes, 0.0);
  EXPECT_DOUBLE_EQ(b.at(6).bytes, 4.0 * (24 + 24 + 48));  // a copy: read + written
}

TEST(Shapes, TorchReshapeChainFolds) {
  // torch 1.13's export of x.view(x.size(0), -1): Shape -> Gather(0) -> Unsqueeze ->
  // Concat with [-1] -> Reshape. The target must fold to [2, -1] and resolve to 2x12.
  Builder b;
  b.input("x", {-1, 3, 4});  // batch symbolic
  Node& c0 = b.node("Constant", {}, {"zero"});
  Attr v;
  v.name = "value", v.kind = Attr::Kind::kTensor;
  v.tensor.rank = 0, v.tensor.dtype = DType::kInt64, v.tensor.values = {0};
  v.tensor.has_values = true;
  c0.attrs.push_back(v);
  b.ints("minus1", {-1});
  b.ints("ax", {0});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"n"}, {ai("axis", 0)});
  b.node("Unsqueeze", {"n", "ax"}, {"n1"});
  b.node("Concat", {"n1", "minus1"}, {"target"}, {ai("axis", 0)});
  b.node("Reshape", {"x", "target"}, {"y"});
  auto w = b.run({{"x", {2, 3, 4}}});
  EXPECT_TRUE(w.empty()) << w[0];  // a given shape: no warning
  const TensorInfo& t = b.at(4).out[0];
  ASSERT_TRUE(t.has_values);
  EXPECT_EQ(t.values, (Dims{2, -1}));
  EXPECT_EQ(dims(b.last()), (Dims{2, 12}));
}

TEST(Shapes, TorchPadChainFolds) {
  // torch 1.13's export of F.pad(x, (0, pad_w, 0, pad_h)) with pad = (7 - W % 7) % 7, as
  // torchvision's Swin pads to whole windows: the pads are computed with Mod, put in
  // torch's order (last dim first) by Concat -> Reshape [-1, 2] -> Slice (reversed) ->
  // Transpose -> Reshape [-1] -> Cast, then Pad. W = 15: 6 columns; H = 14: none.
  Builder b;
  b.input("x", {1, 4, 14, 15});
  b.ints("seven", {7});
  b.ints("hw", {14, 15});
  b.node("Mod", {"hw", "seven"}, {"rem"});    // 0: [0, 1]
  b.node("Sub", {"seven", "rem"}, {"left"});  // 1: [7, 6]
  b.node("Mod", {"left", "seven"}, {"pad"});  // 2: [0, 6]
  b.ints("zeros", {0, 0});
  b.ints("z", {0});
  b.ints("one", {1});
  b.ints("two", {2});
  b.node("Slice", {"pad", "one", "two"}, {"pw"});  // 3: [6]
  b.node("Slice", {"pad", "z", "one"}, {"ph"});    // 4: [0]
  // torch's pad list (0, pw, 0, ph) and its zeros for the leading dims.
  b.node("Concat", {"z", "pw", "z", "ph", "zeros", "zeros"}, {"flat"}, {ai("axis", 0)});  // 5
  b.ints("pairs", {-1, 2});
  b.node("Reshape", {"flat", "pairs"}, {"p2"});  // 6: [[0,6],[0,0],[0,0],[0,0]]
  b.ints("start", {-1});
  b.ints("end", {-5});
  b.ints("axis0", {0});
  b.ints("back", {-1});
  b.node("Slice", {"p2", "start", "end", "axis0", "back"}, {"rev"});  // 7: rows reversed
  b.node("Transpose", {"rev"}, {"t"}, {ais("perm", {1, 0})});         // 8
  b.ints("minus1", {-1});
  b.node("Reshape", {"t", "minus1"}, {"onnx_pads"});  // 9
  b.node("Cast", {"onnx_pads"}, {"pads"}, {ai("to", int64_t(DType::kInt64))});
  b.node("Pad", {"x", "pads"}, {"y"});  // 11
  b.node("Mod", {"hw", "seven"}, {"fm"}, {ai("fmod", 1)});
  b.run();
  auto values = [&](size_t i) {
    return b.at(i).out[0].has_values ? b.at(i).out[0].values : Dims{-99};
  };
  EXPECT_EQ(values(0), (Dims{0, 1}));
  EXPECT_EQ(values(2), (Dims{0, 6}));
  EXPECT_EQ(values(6), (Dims{0, 6, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(7), (Dims{0, 0, 0, 0, 0, 0, 0, 6}));
  EXPECT_EQ(values(8), (Dims{0, 0, 0, 0, 0, 0, 0, 6}));
  EXPECT_EQ(values(10), (Dims{0, 0, 0, 0, 0, 0, 0, 6}));
  EXPECT_EQ(dims(b.at(11)), (Dims{1, 4, 14, 21}));
  EXPECT_EQ(values(12), (Dims{0, 1}));
}

TEST(Shapes, IntegerModTakesTheSignOfItsOperand) {
  // ONNX Mod: fmod 0 (the default) takes the divisor's sign, as Python's %; fmod 1 the
  // dividend's, as C's; and a transpose of a 2x3 value moves its values.
  Builder b;
  b.ints("a", {-7, 7, -7, 7});
  b.ints("d", {3, -3, -3, 3});
  b.node("Mod", {"a", "d"}, {"m"});
  b.node("Mod", {"a", "d"}, {"f"}, {ai("fmod", 1)});
  b.weight("m23", {2, 3}, {1, 2, 3, 4, 5, 6}, DType::kInt64);
  b.node("Transpose", {"m23"}, {"t"});
  b.ints("zero", {0});
  b.node("Mod", {"a", "zero"}, {"undefined"});
  b.run();
  EXPECT_EQ(b.at(0).out[0].values, (Dims{2, -2, -1, 1}));
  EXPECT_EQ(b.at(1).out[0].values, (Dims{-1, 1, -1, 1}));
  EXPECT_EQ(dims(b.at(2)), (Dims{3, 2}));
  EXPECT_EQ(b.at(2).out[0].values, (Dims{1, 4, 2, 5, 3, 6}));
  EXPECT_FALSE(b.at(3).out[0].has_values);  // by zero: not folded
  EXPECT_EQ(dims(b.at(3)), (Dims{4}));
}

TEST(Shapes, ReshapeZeroCopiesAndGatherEmbedding) {
  Builder b;
  b.input("x", {2, 3, 4});
  b.ints("t", {0, -1});
  b.node("Reshape", {"x", "t"}, {"y"});
  b.weight("table", {1000, 64});
  b.input("ids", {8, 16}, DType::kInt64);
  b.node("Gather", {"table", "ids"}, {"e"});
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{2, 12}));
  EXPECT_EQ(dims(b.at(1)), (Dims{8, 16, 64}));
  EXPECT_DOUBLE_EQ(b.at(1).flops, 8.0 * 16 * 64);  // elements copied
  // Reads the indices and the rows it copies, writes them: 8*16*8 + 2 * 8192 * 4.
  EXPECT_DOUBLE_EQ(b.at(1).bytes, 8.0 * 16 * 8 + 2 * 8192.0 * 4);
}

TEST(Shapes, ReduceAndTheRestOfTheAttentionPieces) {
  Builder b;
  b.input("x", {2, 5, 8});
  b.ints("axes", {-1});
  b.ints("shape", {2, 5, 2, 4});
  b.node("ReduceMean", {"x"}, {"m"}, {ais("axes", {-1})});
  b.node("ReduceSum", {"x", "axes"}, {"s"}, {ai("keepdims", 0)});
  b.node("Reshape", {"x", "shape"}, {"h"});
  b.node("Transpose", {"h"}, {"ht"}, {ais("perm", {0, 2, 1, 3})});
  b.node("Transpose", {"h"}, {"hk"}, {ais("perm", {0, 2, 3, 1})});
  b.node("MatMul", {"ht", "hk"}, {"scores"});
  b.node("Where", {"scores", "scores", "scores"}, {"w"});
  b.node("Add", {"scores", "x"}, {"bad"});  // 5 against 8: a mismatch
  b.node("Erf", {"x"}, {"e"});
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{2, 5, 1}));
  EXPECT_EQ(dims(b.at(1)), (Dims{2, 5}));
  EXPECT_EQ(dims(b.at(5)), (Dims{2, 2, 5, 5}));
  EXPECT_DOUBLE_EQ(b.at(5).flops, 2.0 * 100 * 4);
  EXPECT_EQ(dims(b.at(6)), (Dims{2, 2, 5, 5}));
  EXPECT_EQ(dims(b.at(7)), (Dims{2, 2, 5, -1}));  // not guessed
}

// ---------------------------------------------------------------- warnings and defaults

TEST(Shapes, UnknownOperatorWarnsOncePerType) {
  Builder b;
  b.input("x", {1, 4});
  b.node("FancyOp", {"x"}, {"a"});
  b.node("FancyOp", {"a"}, {"b"});
  b.node("Relu", {"b"}, {"c"});
  b.node("Relu", {"x"}, {"d"});
  auto w = b.run();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("'FancyOp' (2 nodes)"), std::string::npos) << w[0];
  EXPECT_EQ(b.at(0).out[0].rank, -1);
  EXPECT_EQ(b.at(2).out[0].rank, -1);  // depends on the unknown: unknown
  EXPECT_LT(b.at(0).flops, 0);
  EXPECT_EQ(dims(b.at(3)), (Dims{1, 4}));  // independent of it: known
  Stats s;
  std::string err;
  ASSERT_EQ(stats_compute(b.g, &s, &err), Status::kOk);
  EXPECT_DOUBLE_EQ(s.work_flops, 4.0);  // the unknown ones count 0
  EXPECT_EQ(s.known_flops_nodes, 1u);
}

TEST(Shapes, GivenShapesOverrideAndUnknownNamesWarn) {
  Builder b;
  b.input("x", {-1, 3});
  b.node("Relu", {"x"}, {"y"});
  auto w = b.run({{"x", {7, 3}}, {"nope", {1}}});
  EXPECT_EQ(dims(b.last()), (Dims{7, 3}));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("'nope'"), std::string::npos);
  // Idempotent: a second call with other shapes replaces the first.
  w.clear();
  std::string err;
  ASSERT_EQ(shapes_infer(&b.g, {{"x", {9, 3}}}, &w, &err), Status::kOk);
  EXPECT_EQ(dims(b.last()), (Dims{9, 3}));
}

TEST(Shapes, HostileDimsStayBounded) {
  Builder b;
  b.input("x", {int64_t{1} << 50, 3});  // over the dim limit: unknown
  b.input("y", {1000, 1000});
  b.ints("huge", {int64_t{1} << 30, int64_t{1} << 30, int64_t{1} << 30});
  b.ints("big", {100000});
  b.ints("rep", {INT64_MAX, 2});
  b.node("Relu", {"x"}, {"r"});
  b.node("ConstantOfShape", {"big"}, {"c"});  // 10^5 elements: not folded
  b.node("Reshape", {"y", "huge"}, {"h"});
  b.node("Tile", {"y", "rep"}, {"t"});
  b.weight("start", {}, {0}, DType::kInt64);
  b.weight("limit", {}, {INT64_MAX}, DType::kInt64);
  b.weight("delta", {}, {1}, DType::kInt64);
  b.node("Range", {"start", "limit", "delta"}, {"rg"});
  b.run();
  EXPECT_EQ(dims(b.at(0)), (Dims{1, 3}));  // unknown dim of an input: taken as 1
  EXPECT_EQ(dims(b.at(1)), (Dims{100000}));
  EXPECT_FALSE(b.at(1).out[0].has_values);
  EXPECT_LE(b.at(2).out[0].elements(), int64_t{1} << 62);
  EXPECT_EQ(dims(b.at(3)), (Dims{-1, 2000}));
  EXPECT_EQ(b.at(4).out[0].values.size(), 0u);
}

// ---------------------------------------------------------------- TensorFlow

TEST(ShapesTf, Conv2DDepthwiseMatMulGather) {
  Builder b(Format::kTfGraphDef);
  b.tf("x", "Placeholder", {},
       {ais("shape", {-1, 15, 15, 3}), ai("dtype", int64_t(DType::kFloat))});
  Node& f = b.tf("f", "Const", {});
  Attr v;
  v.name = "value", v.kind = Attr::Kind::kTensor;
  v.tensor.dims = {3, 3, 3, 8}, v.tensor.rank = 4, v.tensor.dtype = DType::kFloat;
  f.attrs.push_back(v);
  b.tf("conv", "Conv2D", {"x", "f"}, {as("padding", "SAME"), ais("strides", {1, 2, 2, 1})});
  Node& dwf = b.tf("dwf", "Const", {});
  v.tensor.dims = {3, 3, 8, 2};
  dwf.attrs.push_back(v);
  b.tf("dw", "DepthwiseConv2dNative", {"conv", "dwf"},
       {as("padding", "VALID"), ais("strides", {1, 1, 1, 1})});
  b.tf("pool", "MaxPool", {"dw:0", "^f"},
       {as("padding", "VALID"), ais("ksize", {1, 2, 2, 1}), ais("strides", {1, 2, 2, 1})});
  Node& w = b.tf("w", "Const", {});
  v.tensor.dims = {10, 48}, v.tensor.rank = 2;
  w.attrs.push_back(v);
  b.tf("a", "Placeholder", {}, {ais("shape", {4, 48})});
  b.tf("mm", "MatMul", {"a", "w"}, {ai("transpose_b", 1)});
  b.tf("bmm", "BatchMatMulV2", {"conv", "conv"}, {ai("adj_x", 1)});
  b.tf("var", "VarHandleOp", {}, {ais("shape", {100, 16}), ai("dtype", int64_t(DType::kFloat))});
  b.tf("ids", "Placeholder", {}, {ais("shape", {4, 3}), ai("dtype", int64_t(DType::kInt32))});
  b.tf("emb", "ResourceGather", {"var", "ids"}, {ai("dtype", int64_t(DType::kFloat))});
  auto warn = b.run();
  ASSERT_EQ(warn.size(), 1u);                    // x's batch
  EXPECT_EQ(dims(b.at(2)), (Dims{1, 8, 8, 8}));  // SAME, stride 2: ceil(15 / 2)
  EXPECT_DOUBLE_EQ(b.at(2).flops, 2.0 * 512 * 27);
  EXPECT_EQ(dims(b.at(4)), (Dims{1, 6, 6, 16}));  // VALID 3x3: 6; channels 8 * 2
  EXPECT_DOUBLE_EQ(b.at(4).flops, 2.0 * 576 * 9);
  EXPECT_EQ(dims(b.at(5)), (Dims{1, 3, 3, 16}));
  EXPECT_EQ(dims(b.at(8)), (Dims{4, 10}));
  EXPECT_DOUBLE_EQ(b.at(8).flops, 2.0 * 40 * 48);
  EXPECT_EQ(dims(b.at(9)), (Dims{1, 8, 8, 8}));  // adj_x: (8x8)^T x (8x8) per batch
  EXPECT_EQ(dims(b.at(12)), (Dims{4, 3, 16}));
  EXPECT_DOUBLE_EQ(b.at(12).flops, 4.0 * 3 * 16);
  EXPECT_EQ(b.at(2).outputs, (std::vector<std::string>{"conv:0"}));
}

TEST(ShapesTf, ConcatV2ReshapeAndOutputShapesFallback) {
  Builder b(Format::kTfGraphDef);
  b.tf("x", "Placeholder", {}, {ais("shape", {2, 3})});
  Node& ax = b.tf("axis", "Const", {});
  Attr v;
  v.name = "value", v.kind = Attr::Kind::kTensor;
  v.tensor.rank = 0, v.tensor.dtype = DType::kInt32, v.tensor.values = {1};
  v.tensor.has_values = true;
  ax.attrs.push_back(v);
  b.tf("cat", "ConcatV2", {"x", "x", "axis"});
  Node& sh = b.tf("shape", "Const", {});
  v.tensor.rank = 1, v.tensor.dims = {2}, v.tensor.values = {-1, 4};
  sh.attrs.push_back(v);
  b.tf("r", "Reshape", {"cat", "shape"});
  Node& odd = b.tf("odd", "StridedSlice", {"r"});  // no rule, but the file says its shape
  Attr os;
  os.name = "_output_shapes", os.kind = Attr::Kind::kShapes;
  TensorInfo t;
  t.dims = {3, 2}, t.rank = 2;
  os.shapes.push_back(t);
  odd.attrs.push_back(os);
  b.run();
  EXPECT_EQ(dims(b.at(2)), (Dims{2, 6}));
  EXPECT_EQ(dims(b.at(4)), (Dims{3, 4}));
  EXPECT_EQ(dims(b.at(5)), (Dims{3, 2}));
}

TEST(ShapesTf, StridedSliceMasksAndSegments) {
  // x[:, 1] of a 4x3 int32 (shrink axis 1; begin/end masks on axis 0), as tf.keras writes
  // a column pick; then x[::-2] on a 7-vector.
  Builder b(Format::kTfGraphDef);
  b.tf("x", "Placeholder", {}, {ais("shape", {4, 3}), ai("dtype", int64_t(DType::kInt32))});
  auto konst = [&](const std::string& name, Dims v) {
    Node& c = b.tf(name, "Const", {});
    Attr a;
    a.name = "value", a.kind = Attr::Kind::kTensor;
    a.tensor.rank = 1, a.tensor.dims = {int64_t(v.size())}, a.tensor.dtype = DType::kInt32;
    a.tensor.values = v, a.tensor.has_values = true;
    c.attrs.push_back(a);
  };
  konst("b0", {0, 1});
  konst("e0", {0, 2});
  konst("s0", {1, 1});
  b.tf("col", "StridedSlice", {"x", "b0", "e0", "s0"},
       {ai("begin_mask", 1), ai("end_mask", 1), ai("shrink_axis_mask", 2)});
  b.tf("v", "Placeholder", {}, {ais("shape", {7})});
  konst("b1", {0});
  konst("e1", {0});
  konst("s1", {-2});
  b.tf("rev", "StridedSlice", {"v", "b1", "e1", "s1"}, {ai("begin_mask", 1), ai("end_mask", 1)});
  konst("nseg", {5});
  b.tf("seg", "UnsortedSegmentSum", {"x", "col", "nseg"});
  b.run();
  EXPECT_EQ(dims(b.at(4)), (Dims{4}));
  EXPECT_DOUBLE_EQ(b.at(4).flops, 0.0);  // a copy
  EXPECT_EQ(dims(b.at(9)), (Dims{4}));   // indices 6, 4, 2, 0
  EXPECT_EQ(dims(b.last()), (Dims{5, 3}));
}

TEST(ShapesTf, BackwardPassOps) {
  // The pieces of a Keras train step's backward pass: the loss's backprop is its second
  // output, IdentityN passes each input, Slice with size -1, Tile, BroadcastTo,
  // BiasAddGrad, ReluGrad, and a MatMul whose weight is of unknown rank.
  Builder b(Format::kTfGraphDef);
  auto konst = [&](const std::string& name, Dims v, Dims d) {
    Node& c = b.tf(name, "Const", {});
    Attr a;
    a.name = "value", a.kind = Attr::Kind::kTensor;
    a.tensor.rank = int(d.size()), a.tensor.dims = d, a.tensor.dtype = DType::kInt32;
    a.tensor.values = v, a.tensor.has_values = true;
    c.attrs.push_back(a);
  };
  b.tf("logits", "Placeholder", {}, {ais("shape", {8, 5})});
  b.tf("labels", "Placeholder", {}, {ais("shape", {8}), ai("dtype", int64_t(DType::kInt32))});
  b.tf("xent", "SparseSoftmaxCrossEntropyWithLogits", {"logits", "labels"});  // 2
  b.tf("n", "IdentityN", {"xent:backprop:0", "xent:loss:0"});                 // 3
  konst("begin", {2, 0}, {2});
  konst("size", {-1, 3}, {2});
  b.tf("sl", "Slice", {"n:output:0", "begin", "size"});  // 6
  konst("mult", {1, 2}, {2});
  b.tf("tile", "Tile", {"sl", "mult"});  // 8
  konst("to", {4, 6, 6}, {3});
  b.tf("bc", "BroadcastTo", {"tile", "to"});  // 10
  b.tf("bg", "BiasAddGrad", {"tile"});        // 11
  b.tf("rg", "ReluGrad", {"tile", "bc"});     // 12
  b.tf("w", "Placeholder", {});               // 13: unknown rank
  b.tf("mm", "MatMul", {"logits", "w"});      // 14
  b.run();
  EXPECT_EQ(dims(b.at(2), 0), (Dims{8}));
  EXPECT_EQ(dims(b.at(2), 1), (Dims{8, 5}));
  EXPECT_EQ(dims(b.at(3), 0), (Dims{8, 5}));  // backprop, not the loss
  EXPECT_EQ(dims(b.at(3), 1), (Dims{8}));
  EXPECT_EQ(dims(b.at(6)), (Dims{6, 3}));
  EXPECT_EQ(dims(b.at(8)), (Dims{6, 6}));
  EXPECT_EQ(dims(b.at(10)), (Dims{4, 6, 6}));
  EXPECT_EQ(dims(b.at(11)), (Dims{6}));
  EXPECT_EQ(dims(b.at(12)), (Dims{6, 6}));
  EXPECT_EQ(dims(b.at(14)), (Dims{8, -1}));
  EXPECT_LT(b.at(14).flops, 0);  // still unknown: no guess in a plain graph
}

TEST(ShapesTf, FunctionVariablesLearnedFromUpdates) {
  // A lone FunctionDef's resource arguments without shapes: w is updated by
  // ResourceApplyGradientDescent with a [4,3] gradient (round 1); then v by
  // AssignSubVariableOp with mm * lr, mm = x w (round 2; lr: a variable of unknown shape);
  // u only by a value of rank 2 whose second dim nothing tells: [8, 1], with one warning,
  // once nothing more is learned in full.
  Builder b(Format::kTfFunctionDef);
  b.tf("x", "Placeholder", {}, {ais("shape", {8, 4}), ai("dtype", int64_t(DType::kFloat))});
  b.tf("g", "Placeholder", {}, {ais("shape", {4, 3}), ai("dtype", int64_t(DType::kFloat))});
  b.tf("w", "Placeholder", {});                                                  // 2
  b.tf("v", "Placeholder", {});                                                  // 3
  b.tf("u", "Placeholder", {});                                                  // 4
  b.tf("lr", "Placeholder", {});                                                 // 5
  b.tf("rw", "ReadVariableOp", {"w"}, {ai("dtype", int64_t(DType::kFloat))});    // 6
  b.tf("mm", "MatMul", {"x", "rw"});                                             // 7
  b.tf("rlr", "ReadVariableOp", {"lr"}, {ai("dtype", int64_t(DType::kFloat))});  // 8
  b.tf("apply", "ResourceApplyGradientDescent", {"w", "rlr", "g"});              // 9
  b.tf("rv", "ReadVariableOp", {"v"}, {ai("dtype", int64_t(DType::kFloat))});    // 10
  b.tf("mv", "MatMul", {"mm", "rv"}, {ai("transpose_b", 1)});                    // 11
  b.tf("step", "Mul", {"mm", "rlr"});                                            // 12
  b.tf("upd", "AssignSubVariableOp", {"v", "step"});                             // 13
  b.tf("ru", "ReadVariableOp", {"u"}, {ai("dtype", int64_t(DType::kFloat))});    // 14
  b.tf("mu", "MatMul", {"x", "ru"}, {ai("transpose_a", 1)});                     // 15
  b.tf("gu", "MatMul", {"x", "ru"}, {ai("transpose_b", 1)});                     // 16
  b.tf("au", "AssignVariableOp", {"u", "gu"});
  auto warn = b.run();
  EXPECT_EQ(dims(b.at(7)), (Dims{8, 3}));
  EXPECT_DOUBLE_EQ(b.at(7).flops, 2.0 * 24 * 4);
  EXPECT_EQ(dims(b.at(11)), (Dims{8, 8}));  // v: [8,3], transposed
  EXPECT_EQ(b.at(3).op, "VarHandleOp");
  EXPECT_EQ(b.at(5).op, "Placeholder");  // lr: never updated here
  EXPECT_EQ(dims(b.at(15)), (Dims{4, 1}));
  size_t guessed = 0;
  for (const std::string& w : warn) guessed += w.find("variable 'u'") != std::string::npos;
  EXPECT_EQ(guessed, 1u);
  for (const std::string& w : warn) EXPECT_EQ(w.find("variable 'v'"), std::string::npos) << w;
}

// ---------------------------------------------------------------- work and span

TEST(WorkSpan, DiamondByHand) {
  // a(10) -> b(20) -> d(1); a -> c(5) -> d; e(7) alone; f unknown after d.
  Graph g;
  g.format = Format::kJson;
  auto add = [&](const char* name, double flops, std::vector<uint32_t> preds) {
    Node n;
    n.name = name, n.op = "Relu", n.flops = flops, n.preds = std::move(preds);
    g.nodes.push_back(n);
  };
  add("a", 10, {});
  add("b", 20, {0});
  add("c", 5, {0});
  add("d", 1, {1, 2});
  add("e", 7, {});
  add("f", -1, {3});
  Stats s;
  std::string err;
  ASSERT_EQ(stats_compute(g, &s, &err), Status::kOk) << err;
  EXPECT_DOUBLE_EQ(s.work_flops, 43.0);
  EXPECT_DOUBLE_EQ(s.span_flops, 31.0);  // a b d
  EXPECT_DOUBLE_EQ(s.work_over_span, 43.0 / 31.0);
  EXPECT_EQ(s.known_flops_nodes, 5u);
  const std::string j = report::stats_json(s);
  EXPECT_NE(j.find("\"work_flops\":43"), std::string::npos) << j;
  EXPECT_NE(j.find("\"span_flops\":31"), std::string::npos) << j;
  EXPECT_NE(j.find("\"heavy_by_type\""), std::string::npos) << j;  // old keys stay
}

TEST(WorkSpan, NoWorkMeansRatioOne) {
  Graph g;
  Node n;
  n.name = "a", n.op = "Relu";
  g.nodes.push_back(n);
  Stats s;
  std::string err;
  ASSERT_EQ(stats_compute(g, &s, &err), Status::kOk);
  EXPECT_DOUBLE_EQ(s.work_over_span, 1.0);
}

TEST(WorkSpan, WeightedParallelismUsesFlopsOnlyWhenEveryHeavyNodeHasThem) {
  Builder b;
  b.input("x", {1, 8});
  b.weight("w", {8, 8});
  b.node("MatMul", {"x", "w"}, {"a"}).heavy = true;
  b.node("MatMul", {"x", "w"}, {"c"}).heavy = true;
  b.node("MatMul", {"a", "w"}, {"d"}).heavy = true;
  b.run();
  Stats s;
  std::string err;
  ASSERT_EQ(stats_compute(b.g, &s, &err), Status::kOk);
  EXPECT_EQ(s.costs, "flops");
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 3.0 / 2.0);  // equal FLOPs: 3 over a path of 2
  b.g.nodes[2].op = "FancyOp";                          // an unknown heavy op: unit costs
  b.run();
  ASSERT_EQ(stats_compute(b.g, &s, &err), Status::kOk);
  EXPECT_EQ(s.costs, "unit");
}

// ---------------------------------------------------------------- from the bytes

std::string fixed32(uint32_t n, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  std::string s = test::varint((uint64_t(n) << 3) | 5);
  for (int i = 0; i < 4; ++i) s.push_back(char((u >> (8 * i)) & 0xFF));
  return s;
}
std::string le64(int64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(char((uint64_t(v) >> (8 * i)) & 0xFF));
  return s;
}

TEST(ShapesFromBytes, OnnxAttributesInitializerValuesAndInputs) {
  using namespace test;  // NOLINT: encoding helpers
  auto attr_ints = [](const std::string& n, Dims v) {
    std::string a = field_bytes(1, n);
    for (int64_t x : v) a += field_varint(8, uint64_t(x));
    return field_bytes(5, a + field_varint(20, 7));
  };
  auto dim = [](const std::string& sym, int64_t v) {
    return field_bytes(1, sym.empty() ? field_varint(1, uint64_t(v)) : field_bytes(2, sym));
  };
  const std::string shape = field_bytes(2, dim("N", 0) + dim("", 3) + dim("", 8) + dim("", 8));
  const std::string x_info =
      field_bytes(1, "x") + field_bytes(2, field_bytes(1, field_varint(1, 1) + shape));
  const std::string target =
      field_bytes(5, field_varint(1, 2) + field_varint(2, 7) + field_bytes(8, "target") +
                         field_bytes(9, le64(1) + le64(-1)));
  const std::string conv_attrs =
      attr_ints("kernel_shape", {3, 3}) + attr_ints("pads", {1, 1, 1, 1}) +
      field_bytes(5, field_bytes(1, "auto_pad") + field_bytes(4, "NOTSET") + field_varint(20, 3)) +
      field_bytes(5, field_bytes(1, "alpha") + fixed32(2, 0.5f) + field_varint(20, 1));
  const std::string g = onnx_initializer("W", {4, 3, 3, 3}) + target + field_bytes(11, x_info) +
                        onnx_node("Conv", {"x", "W"}, {"c"}, "conv", conv_attrs) +
                        onnx_node("Reshape", {"c", "target"}, {"y"}, "r") +
                        field_bytes(12, field_bytes(1, "y"));
  const std::string bytes = onnx_model(g);
  Graph graph;
  std::string err;
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kOnnx, &graph, &err), Status::kOk)
      << err;
  EXPECT_EQ(graph.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(graph.outputs, (std::vector<std::string>{"y"}));
  const Node& conv = graph.nodes[0];
  EXPECT_EQ(conv.attr_ints("pads"), (Dims{1, 1, 1, 1}));
  EXPECT_EQ(conv.attr_string("auto_pad", "?"), "NOTSET");
  EXPECT_DOUBLE_EQ(conv.attr_float("alpha", 0), 0.5);
  EXPECT_EQ(conv.attr_int("group", 1), 1);  // absent: the default
  const TensorInfo& t = graph.tensors.at("target");
  EXPECT_TRUE(t.constant);
  EXPECT_EQ(t.dtype, DType::kInt64);
  EXPECT_EQ(t.values, (Dims{1, -1}));
  EXPECT_EQ(graph.tensors.at("x").dims, (Dims{-1, 3, 8, 8}));  // N is symbolic
  ASSERT_EQ(graph.nodes[1].sources.size(), 2u);
  EXPECT_EQ(graph.nodes[1].sources[0].node, 0);
  EXPECT_EQ(graph.nodes[1].sources[1].node, -1);  // an initializer
  std::vector<std::string> w;
  ASSERT_EQ(shapes_infer(&graph, {}, &w, &err), Status::kOk);
  EXPECT_EQ(graph.nodes[0].shape, (Dims{1, 4, 8, 8}));
  EXPECT_EQ(graph.nodes[1].shape, (Dims{1, 256}));
  EXPECT_EQ(w.size(), 1u);  // N taken as 1
}

TEST(ShapesFromBytes, TfAttrsPlaceholderShapeAndConstTensor) {
  using namespace test;  // NOLINT: encoding helpers
  auto attr = [](const std::string& key, const std::string& value) {
    return field_bytes(5, field_bytes(1, key) + field_bytes(2, value));
  };
  auto tshape = [](Dims d) {
    std::string s;
    for (int64_t v : d) s += field_bytes(2, field_varint(1, uint64_t(v)));
    return s;
  };
  const std::string x = field_bytes(1, "x") + field_bytes(2, "Placeholder") +
                        attr("dtype", field_varint(6, 1)) +
                        attr("shape", field_bytes(7, tshape({-1, 8, 8, 3})));
  const std::string f =
      field_bytes(1, "f") + field_bytes(2, "Const") +
      attr("value", field_bytes(8, field_varint(1, 1) + field_bytes(2, tshape({3, 3, 3, 4}))));
  std::string strides;
  for (int v : {1, 2, 2, 1}) strides += varint(uint64_t(v));
  const std::string c = field_bytes(1, "c") + field_bytes(2, "Conv2D") + field_bytes(3, "x") +
                        field_bytes(3, "f") + attr("padding", field_bytes(2, "SAME")) +
                        attr("strides", field_bytes(1, field_bytes(3, strides))) +
                        attr("T", field_varint(6, 1));
  const std::string bytes = tf_graph({x, f, c});
  Graph graph;
  std::string err;
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kTfGraphDef, &graph, &err), Status::kOk)
      << err;
  EXPECT_EQ(graph.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(graph.nodes[2].attr_ints("strides"), (Dims{1, 2, 2, 1}));
  EXPECT_EQ(graph.nodes[2].attr_int("T", 0), int64_t(DType::kFloat));
  std::vector<std::string> w;
  ASSERT_EQ(shapes_infer(&graph, {{"x:0", {2, 8, 8, 3}}}, &w, &err), Status::kOk);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(graph.nodes[2].shape, (Dims{2, 4, 4, 4}));
  EXPECT_DOUBLE_EQ(graph.nodes[2].flops, 2.0 * 128 * 27);
}

TEST(ShapesFromBytes, TfDimWithoutSizeIsAnEmptyDim) {
  // proto3 leaves a zero size out: `dim {}` is a dim of 0 (Keras's empty Shape constants,
  // the axes of a reduction over nothing), not an unknown one (-1 is written out).
  using namespace test;  // NOLINT: encoding helpers
  auto attr = [](const std::string& key, const std::string& value) {
    return field_bytes(5, field_bytes(1, key) + field_bytes(2, value));
  };
  const std::string empty =
      field_bytes(1, "e") + field_bytes(2, "Const") +
      attr("value", field_bytes(8, field_varint(1, 3) + field_bytes(2, field_bytes(2, ""))));
  const std::string bytes = tf_graph({empty});
  Graph graph;
  std::string err;
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kTfGraphDef, &graph, &err), Status::kOk)
      << err;
  std::vector<std::string> w;
  ASSERT_EQ(shapes_infer(&graph, {}, &w, &err), Status::kOk);
  EXPECT_EQ(graph.nodes[0].shape, (Dims{0}));
  ASSERT_FALSE(graph.nodes[0].out.empty());
  EXPECT_TRUE(graph.nodes[0].out[0].has_values);
  EXPECT_TRUE(graph.nodes[0].out[0].values.empty());
}

// ---------------------------------------------------------------- input shapes syntax

TEST(InputShapes, Parse) {
  InputShapes s;
  std::string err;
  ASSERT_EQ(input_shapes_parse("x=1x3x224x224,ids:0=8x16;s=", &s, &err), Status::kOk) << err;
  EXPECT_EQ(s["x"], (Dims{1, 3, 224, 224}));
  EXPECT_EQ(s["ids:0"], (Dims{8, 16}));
  EXPECT_EQ(s["s"], Dims{});
  for (const char* bad : {"x", "=1x2", "x=1xx2", "x=-1", "x=1x", "x=a"})
    EXPECT_EQ(input_shapes_parse(bad, &s, &err), Status::kBadFormat) << bad;
}

TEST(InputShapesResized, BatchOnEveryInputAndSizeOnFourDimensionalOnes) {
  Builder b;
  b.input("image", {-1, 3, 224, 224});
  b.input("ids", {1, 8}, DType::kInt64);
  b.input("scalar", {});
  b.g.inputs.push_back("undescribed");  // an input the file gives no shape for
  EXPECT_TRUE(input_shapes_resized(b.g, 0, 0).empty()) << "nothing asked: the file's own";
  InputShapes s = input_shapes_resized(b.g, 8, 64);
  EXPECT_EQ(s["image"], (Dims{8, 3, 64, 64}));
  EXPECT_EQ(s["ids"], (Dims{8, 8})) << "dim 0 is the batch; H and W only on 4-D inputs";
  EXPECT_EQ(s["scalar"], Dims{}) << "no dim 0 to set";
  EXPECT_EQ(s.count("undescribed"), 0u);
  s = input_shapes_resized(b.g, 0, 96);
  EXPECT_EQ(s["image"], (Dims{1, 3, 96, 96}))
      << "a symbolic batch reads as 1, as shapes_infer reads it";
  EXPECT_EQ(s["ids"], (Dims{1, 8}));
}

}  // namespace
}  // namespace pw::graph
