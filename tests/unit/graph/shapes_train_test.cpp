// Shape rules and costs of the TensorFlow ops that a Keras training step adds to its model's
// forward ops (graph/shapes_tf_train.cpp): convolution and pooling gradients, the gradient
// tape's shape arithmetic, splits, recurrent layers' loops and TensorLists, and the
// variables learned from sparse updates. Each case is a small graph with its answer by hand.
#include <gtest/gtest.h>

#include "graph/graph.h"
#include "tests/unit/graph/shape_builder.h"

namespace pw::graph {
namespace {

using namespace test;  // NOLINT: the graph builder

constexpr int64_t kFloat = int64_t(DType::kFloat);

Dims values(const Node& n, size_t k = 0) {
  return k < n.out.size() && n.out[k].has_values ? n.out[k].values : Dims{-99};
}

TEST(ShapesTrain, ConvolutionGradientsTakeTheirShapeFromTheSizesOperand) {
  // A 5x5 SAME convolution of a [2,16,16,3] batch to 8 channels, and its two gradients as
  // the tape writes them: ShapeN(x, filter) names both sizes.
  Builder b(Format::kTfGraphDef);
  b.tf("x", "Placeholder", {}, {ais("shape", {2, 16, 16, 3}), ai("dtype", kFloat)});  // 0
  b.tf("w", "VarHandleOp", {}, {ais("shape", {5, 5, 3, 8}), ai("dtype", kFloat)});    // 1
  b.tf("rw", "ReadVariableOp", {"w"}, {ai("dtype", kFloat)});                         // 2
  b.tf("conv", "Conv2D", {"x", "rw"}, {as("padding", "SAME")});                       // 3
  b.tf("sn", "ShapeN", {"x", "rw"}, {ai("N", 2)});                                    // 4
  b.tf("dx", "Conv2DBackpropInput", {"sn:output:0", "rw", "conv"}, {as("padding", "SAME")});
  b.tf("dw", "Conv2DBackpropFilter", {"x", "sn:output:1", "conv"}, {as("padding", "SAME")});
  b.tf("dwd", "DepthwiseConv2dNativeBackpropFilter", {"x", "sn:output:1", "conv"});  // 7
  b.tf("dxd", "DepthwiseConv2dNativeBackpropInput", {"sn:output:0", "rw", "conv"});  // 8
  b.tf_ints("b0", {0, 0, 0, 0});                                                     // 9
  b.tf_ints("e0", {2, 8, 8, 8});                                                     // 10
  b.tf_ints("s1", {1, 2, 2, 1});                                                     // 11
  b.tf_ints("full", {2, 16, 16, 8});                                                 // 12
  b.tf("ssg", "StridedSliceGrad", {"full", "b0", "e0", "s1", "conv"});               // 13
  auto warn = b.run();
  EXPECT_TRUE(warn.empty()) << warn[0];
  EXPECT_EQ(values(b.at(4), 0), (Dims{2, 16, 16, 3}));
  EXPECT_EQ(values(b.at(4), 1), (Dims{5, 5, 3, 8}));
  EXPECT_EQ(dims(b.at(5)), (Dims{2, 16, 16, 3}));
  EXPECT_EQ(dims(b.at(6)), (Dims{5, 5, 3, 8}));
  // Each gradient costs the forward convolution: 2 * |dy| * kh * kw * C_in.
  const double fwd = 2.0 * (2 * 16 * 16 * 8) * 5 * 5 * 3;
  EXPECT_DOUBLE_EQ(b.at(3).flops, fwd);
  EXPECT_DOUBLE_EQ(b.at(5).flops, fwd);
  EXPECT_DOUBLE_EQ(b.at(6).flops, fwd);
  EXPECT_DOUBLE_EQ(b.at(7).flops, 2.0 * (2 * 16 * 16 * 8) * 5 * 5);  // depthwise: no C_in
  EXPECT_DOUBLE_EQ(b.at(4).flops, 0.0);                              // shapes cost nothing
  EXPECT_EQ(dims(b.at(8)), (Dims{2, 16, 16, 3}));
  EXPECT_DOUBLE_EQ(b.at(8).flops, 2.0 * (2 * 16 * 16 * 8) * 5 * 5);
  EXPECT_EQ(dims(b.at(13)), (Dims{2, 16, 16, 8}));  // the sliced tensor's shape
  EXPECT_DOUBLE_EQ(b.at(13).flops, 0.0);            // a copy
}

TEST(ShapesTrain, PoolingBatchNormAndBiasGradients) {
  Builder b(Format::kTfGraphDef);
  b.tf("x", "Placeholder", {}, {ais("shape", {2, 8, 8, 4}), ai("dtype", kFloat)});  // 0
  b.tf("p", "MaxPool", {"x"},
       {as("padding", "VALID"), ais("ksize", {1, 2, 2, 1}), ais("strides", {1, 2, 2, 1})});
  b.tf("g", "MaxPoolGrad", {"x", "p", "p"},
       {as("padding", "VALID"), ais("ksize", {1, 2, 2, 1}), ais("strides", {1, 2, 2, 1})});
  b.tf_ints("xs", {2, 8, 8, 4});  // 3
  b.tf("ag", "AvgPoolGrad", {"xs", "p"}, {ais("ksize", {1, 2, 2, 1})});
  b.tf("scale", "Placeholder", {}, {ais("shape", {4}), ai("dtype", kFloat)});  // 5
  b.tf("bn", "FusedBatchNormGradV3", {"x", "x", "scale", "scale", "scale", "scale"});
  b.tf("dx", "Identity", {"bn:x_backprop:0"});      // 7
  b.tf("ds", "Identity", {"bn:scale_backprop:0"});  // 8
  b.tf("bg", "BiasAddGrad", {"x"});                 // 9
  b.run();
  EXPECT_EQ(dims(b.at(2)), (Dims{2, 8, 8, 4}));
  EXPECT_DOUBLE_EQ(b.at(2).flops, 2.0 * 4 * 4 * 4 * 4);  // |dy| * kernel
  EXPECT_EQ(dims(b.at(4)), (Dims{2, 8, 8, 4}));
  EXPECT_EQ(dims(b.at(7)), (Dims{2, 8, 8, 4}));
  EXPECT_EQ(dims(b.at(8)), (Dims{4}));
  EXPECT_DOUBLE_EQ(b.at(6).flops, 5.0 * 512);
  EXPECT_EQ(dims(b.at(9)), (Dims{4}));
  EXPECT_DOUBLE_EQ(b.at(9).flops, 512.0);  // a sum over the batch and the pixels
}

TEST(ShapesTrain, TapeShapeArithmeticFolds) {
  // The pieces of a Concatenate's and a Transpose's gradients, a broadcast's reduction
  // axes, a Range over a rank, and a variable's shape read through its handle.
  Builder b(Format::kTfGraphDef);
  b.tf_ints("axis", {3}, {});                                                         // 0: a scalar
  b.tf_ints("s1", {16, 16, 16, 8});                                                   // 1
  b.tf_ints("s2", {16, 16, 16, 24});                                                  // 2
  b.tf("off", "ConcatOffset", {"axis", "s1", "s2", "s1"}, {ai("N", 3)});              // 3
  b.tf_ints("perm", {1, 2, 0});                                                       // 4
  b.tf("inv", "InvertPermutation", {"perm"});                                         // 5
  b.tf_ints("a", {8, 1, 5});                                                          // 6
  b.tf_ints("c", {4, 5});                                                             // 7
  b.tf("bga", "BroadcastGradientArgs", {"a", "c"});                                   // 8
  b.tf_ints("zero", {0}, {});                                                         // 9
  b.tf_ints("one", {1}, {});                                                          // 10
  b.tf("x", "Placeholder", {}, {ais("shape", {2, 3, 4}), ai("dtype", kFloat)});       // 11
  b.tf("rank", "Rank", {"x"});                                                        // 12
  b.tf("r", "Range", {"zero", "rank", "one"}, {ai("Tidx", int64_t(DType::kInt32))});  // 13
  b.tf("sum", "Sum", {"x", "r"});                                             // 14: over every axis
  b.tf("v", "VarHandleOp", {}, {ais("shape", {7, 9}), ai("dtype", kFloat)});  // 15
  b.tf("vs", "VariableShape", {"v"});                                         // 16
  b.tf_ints("b0", {1});                                                       // 17
  b.tf_ints("e0", {2});                                                       // 18
  b.tf("col", "StridedSlice", {"vs", "b0", "e0", "one"}, {ai("shrink_axis_mask", 1)});  // 19
  b.tf("tail", "StridedSlice", {"s2", "one", "zero", "one"}, {ai("end_mask", 1)});      // 20
  b.tf("size", "Size", {"x"});                                                          // 21
  b.run();
  EXPECT_EQ(values(b.at(3), 0), (Dims{0, 0, 0, 0}));
  EXPECT_EQ(values(b.at(3), 1), (Dims{0, 0, 0, 8}));
  EXPECT_EQ(values(b.at(3), 2), (Dims{0, 0, 0, 32}));
  EXPECT_EQ(values(b.at(5)), (Dims{2, 0, 1}));
  EXPECT_EQ(values(b.at(8), 0), (Dims{1}));  // a is broadcast along axis 1 ...
  EXPECT_EQ(values(b.at(8), 1), (Dims{0}));  // ... c along the axis it lacks
  EXPECT_EQ(values(b.at(13)), (Dims{0, 1, 2}));
  EXPECT_EQ(dims(b.at(14)), (Dims{}));
  EXPECT_EQ(values(b.at(16)), (Dims{7, 9}));
  EXPECT_EQ(values(b.at(19)), (Dims{9}));
  EXPECT_EQ(dims(b.at(19)), (Dims{}));
  EXPECT_EQ(values(b.at(20)), (Dims{16, 16, 24}));
  EXPECT_EQ(values(b.at(21)), (Dims{24}));
}

TEST(ShapesTrain, SplitsAndUnpack) {
  Builder b(Format::kTfGraphDef);
  b.tf("x", "Placeholder", {}, {ais("shape", {16, 64}), ai("dtype", kFloat)});  // 0
  b.tf_ints("ax", {1}, {});                                                     // 1
  b.tf("s", "Split", {"ax", "x"}, {ai("num_split", 4)});                        // 2
  b.tf_ints("sizes", {16, -1, 8});                                              // 3
  b.tf("sv", "SplitV", {"x", "sizes", "ax"}, {ai("num_split", 3)});             // 4
  b.tf("u", "Unpack", {"x"}, {ai("num", 16)});                                  // 5
  b.tf("s3", "Identity", {"s:output:3"});                                       // 6
  b.run();
  ASSERT_EQ(b.at(2).out.size(), 4u);
  EXPECT_EQ(dims(b.at(2), 3), (Dims{16, 16}));
  EXPECT_EQ(dims(b.at(6)), (Dims{16, 16}));
  EXPECT_EQ(dims(b.at(4), 0), (Dims{16, 16}));
  EXPECT_EQ(dims(b.at(4), 1), (Dims{16, 40}));  // the rest
  EXPECT_EQ(dims(b.at(4), 2), (Dims{16, 8}));
  ASSERT_EQ(b.at(5).out.size(), 16u);
  EXPECT_EQ(dims(b.at(5), 15), (Dims{64}));
}

TEST(ShapesTrain, RecurrentLoopsTensorListsAndWhile) {
  // A Keras LSTM's loop as its train step holds it: the sequence unstacked into a list,
  // the outputs' list reserved, a While whose body is another function (output_shapes say
  // what the loop variables are), the outputs stacked again; a weight passed through the
  // loop, whose shape VariableShape reads back after it.
  Builder b(Format::kTfGraphDef);
  const int64_t kInt32 = int64_t(DType::kInt32);
  b.tf("seq", "Placeholder", {}, {ais("shape", {12, 16, 8}), ai("dtype", kFloat)});    // 0
  b.tf_ints("es", {16, 8});                                                            // 1
  b.tf("in", "TensorListFromTensor", {"seq", "es"}, {ai("element_dtype", kFloat)});    // 2
  b.tf_ints("unknown", {-1}, {});                                                      // 3
  b.tf_ints("n", {12}, {});                                                            // 4
  b.tf("outs", "TensorListReserve", {"unknown", "n"}, {ai("element_dtype", kFloat)});  // 5
  b.tf("h", "Placeholder", {}, {ais("shape", {16, 16}), ai("dtype", kFloat)});         // 6
  b.tf("w", "VarHandleOp", {}, {ais("shape", {8, 64}), ai("dtype", kFloat)});          // 7
  Attr shapes;
  shapes.name = "output_shapes", shapes.kind = Attr::Kind::kShapes;
  for (Dims d : {Dims{}, Dims{}, Dims{16, 16}, Dims{}, Dims{}}) {
    TensorInfo t;
    t.rank = int(d.size()), t.dims = d;
    shapes.shapes.push_back(t);
  }
  // T: int32, variant, float, variant, resource (variant and resource have no DType here).
  b.tf("loop", "While", {"n", "outs", "h", "in", "w"},
       {ais("T", {kInt32, 0, kFloat, 0, 0}), shapes});  // 8
  b.tf_ints("es2", {16, 16});                           // 9
  b.tf("stack", "TensorListStack", {"loop:output:1", "es2"},
       {ai("num_elements", 12), ai("element_dtype", kFloat)});  // 10
  b.tf("vs", "VariableShape", {"loop:output:4"});               // 11
  b.tf_ints("i", {3}, {});                                      // 12
  b.tf("item", "TensorListGetItem", {"in", "i", "unknown"}, {ai("element_dtype", kFloat)});
  b.tf("set", "TensorListSetItem", {"outs", "i", "h"});                                  // 14
  b.tf("stack2", "TensorListStack", {"set", "unknown"}, {ai("element_dtype", kFloat)});  // 15
  b.tf("if", "StatelessIf", {"n", "h"}, {ais("Tout", {kFloat}), shapes});                // 16
  b.tf_ints("idx", {0, 2, 4});                                                           // 17
  b.tf("gath", "TensorListGather", {"in", "idx", "unknown"}, {ai("element_dtype", kFloat)});
  b.tf("len", "TensorListLength", {"in"});        // 19
  b.tf("es3", "TensorListElementShape", {"in"});  // 20
  b.run();
  EXPECT_EQ(dims(b.at(2)), (Dims{12, 16, 8}));
  EXPECT_EQ(dims(b.at(5)), (Dims{-99}));  // the element shape is not known yet
  ASSERT_EQ(b.at(8).out.size(), 5u);
  EXPECT_EQ(dims(b.at(8), 0), (Dims{}));
  EXPECT_FALSE(b.at(8).out[0].has_values);  // a loop counter is not the value it began with
  EXPECT_EQ(dims(b.at(8), 2), (Dims{16, 16}));
  EXPECT_EQ(dims(b.at(8), 3), (Dims{12, 16, 8}));  // a list passes through
  EXPECT_LT(b.at(8).flops, 0);                     // its body is another function
  EXPECT_EQ(dims(b.at(10)), (Dims{12, 16, 16}));
  EXPECT_EQ(values(b.at(11)), (Dims{8, 64}));
  EXPECT_EQ(dims(b.at(13)), (Dims{16, 8}));
  // A list reserved with no element shape is described by nothing, its length included;
  // an item set tells the elements, not the length.
  EXPECT_EQ(dims(b.at(15)), (Dims{-1, 16, 16}));
  EXPECT_EQ(dims(b.at(16)), (Dims{}));  // If: its results' shapes, as recorded
  EXPECT_EQ(dims(b.at(18)), (Dims{3, 16, 8}));
  EXPECT_EQ(dims(b.at(19)), (Dims{}));
  EXPECT_EQ(values(b.at(20)), (Dims{16, 8}));
}

TEST(ShapesTrain, EmbeddingRowsLearnedFromASparseUpdate) {
  // An embedding table updated by ResourceScatterSub(table, ids, rows): the rows say the
  // table's width; its row count appears nowhere and is taken as 1, with a warning. The
  // lookup's cost depends only on what it gathers.
  Builder b(Format::kTfFunctionDef);
  b.tf("ids", "Placeholder", {}, {ais("shape", {4, 10}), ai("dtype", int64_t(DType::kInt32))});
  b.tf("rows", "Placeholder", {}, {ais("shape", {40, 8}), ai("dtype", kFloat)});  // 1
  b.tf("table", "Placeholder", {});                                               // 2
  b.tf("rt", "ReadVariableOp", {"table"}, {ai("dtype", kFloat)});                 // 3
  b.tf_ints("axis", {0}, {});                                                     // 4
  b.tf("emb", "GatherV2", {"rt", "ids", "axis"});                                 // 5
  b.tf_ints("flat", {40});                                                        // 6
  b.tf("fids", "Reshape", {"ids", "flat"});                                       // 7
  b.tf("upd", "ResourceScatterSub", {"table", "fids", "rows"}, {ai("dtype", kFloat)});
  auto warn = b.run();
  EXPECT_EQ(b.at(2).op, "VarHandleOp");
  EXPECT_EQ(dims(b.at(3)), (Dims{1, 8}));
  EXPECT_EQ(dims(b.at(5)), (Dims{4, 10, 8}));
  EXPECT_DOUBLE_EQ(b.at(5).flops, 320.0);
  size_t guessed = 0;
  for (const std::string& w : warn) guessed += w.find("variable 'table'") != std::string::npos;
  EXPECT_EQ(guessed, 1u);
}

}  // namespace
}  // namespace pw::graph
