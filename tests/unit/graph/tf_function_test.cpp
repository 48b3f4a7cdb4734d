// TF2 function graphs (Format::kTfFunctionDef): a lone FunctionDef as TensorFlow adds it to
// an eager context, its arguments' shapes from arg_attr / _input_shapes / handle_data, its
// width and costs; hostile bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "tests/unit/graph/test_util.h"

namespace pw::graph {
namespace {

using namespace test;  // NOLINT: encoding helpers

std::string shape(std::vector<int64_t> dims) {
  std::string s;
  for (int64_t d : dims) s += field_bytes(2, field_varint(1, uint64_t(d)));
  return s;
}
std::string attr_entry(const std::string& key, const std::string& value) {
  return field_bytes(1, key) + field_bytes(2, value);
}
std::string node(const std::string& name, const std::string& op, std::vector<std::string> in,
                 const std::string& attrs = "") {
  return tf_node(name, op, in) + attrs;
}
std::string dtype_float() {
  return field_bytes(5, attr_entry("dtype", field_varint(6, 1)));
}

// x: float [2,8] (arg_attr _output_shapes); w1, w2: resources of float [8,4] variables
// (handle_data); two MatMuls side by side, then their sum.
std::string two_branches(bool with_shapes) {
  std::string sig = field_bytes(1, "__inference_train_step_42");
  sig += field_bytes(2, field_bytes(1, "x") + field_varint(3, 1));
  for (const char* w : {"w1", "w2"}) {
    std::string arg = field_bytes(1, w) + field_varint(3, 20);
    if (with_shapes) arg += field_bytes(7, field_varint(1, 1) + field_bytes(2, shape({8, 4})));
    sig += field_bytes(2, arg);
  }
  sig += field_bytes(3, field_bytes(1, "out"));
  std::string f = field_bytes(1, sig);
  f += field_bytes(3, node("r1", "ReadVariableOp", {"w1"}, dtype_float()));
  f += field_bytes(3, node("r2", "ReadVariableOp", {"w2"}, dtype_float()));
  f += field_bytes(3, node("m1", "MatMul", {"x", "r1:value:0"}));
  f += field_bytes(3, node("m2", "MatMul", {"x", "r2:value:0"}));
  f += field_bytes(3, node("sum", "AddV2", {"m1:product:0", "m2:product:0"}));
  f += field_bytes(4, field_bytes(1, "out") + field_bytes(2, "sum:z:0"));
  if (with_shapes) {
    const std::string shapes = field_bytes(1, field_bytes(7, shape({2, 8})));  // list(shape)
    f += field_bytes(7, field_varint(1, 0) +
                            field_bytes(2, field_bytes(1, attr_entry("_output_shapes", shapes))));
  }
  return f;
}

Status read(const std::string& bytes, Graph* g, Stats* s) {
  std::string err;
  Status st = model_parse(bytes.data(), bytes.size(), Format::kTfFunctionDef, g, &err);
  if (st != Status::kOk) return st;
  st = shapes_infer(g, {}, nullptr, &err);
  if (st != Status::kOk) return st;
  return stats_compute(*g, s, &err);
}

TEST(TfFunction, WidthAndCostsOfTwoParallelBranches) {
  Graph g;
  Stats s;
  ASSERT_EQ(read(two_branches(true), &g, &s), Status::kOk);
  EXPECT_EQ(g.name, "__inference_train_step_42");
  EXPECT_EQ(s.name, "__inference_train_step_42");
  EXPECT_EQ(s.source.rfind("tf-functiondef:", 0), 0u) << s.source;
  EXPECT_EQ(s.heavy, 2u);
  EXPECT_EQ(s.layers, 1u);
  EXPECT_EQ(s.avg_width, 2u);
  EXPECT_EQ(s.max_level_width, 2u);
  EXPECT_EQ(s.costs, "flops");
  // Each MatMul: [2,8] x [8,4] -> 2 * (2*4) * 8 FLOPs.
  for (const Node& n : g.nodes) {
    if (n.op == "MatMul") {
      EXPECT_DOUBLE_EQ(n.flops, 2.0 * 8 * 8) << n.name;
    }
  }
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 2.0);
  // The arguments are graph inputs (x) and variables (w1, w2), not edges from nowhere.
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(g.nodes[1].op, "VarHandleOp");
}

TEST(TfFunction, UnknownArgumentShapesGiveTheWidthWithUnitCosts) {
  Graph g;
  Stats s;
  ASSERT_EQ(read(two_branches(false), &g, &s), Status::kOk);
  EXPECT_EQ(s.heavy, 2u);
  EXPECT_EQ(s.avg_width, 2u);
  EXPECT_EQ(s.costs, "unit");
}

TEST(TfFunction, InputShapesAttributeIsUsedWhenNoArgAttr) {
  std::string f = two_branches(false);
  // FunctionDef.attr "_input_shapes": x [2,8], then the two resources (unknown rank).
  std::string list = field_bytes(7, shape({2, 8})) + field_bytes(7, field_varint(3, 1)) +
                     field_bytes(7, field_varint(3, 1));
  f += field_bytes(5, attr_entry("_input_shapes", field_bytes(1, list)));
  Graph g;
  Stats s;
  ASSERT_EQ(read(f, &g, &s), Status::kOk);
  ASSERT_EQ(g.nodes[0].name, "x");
  ASSERT_FALSE(g.nodes[0].out.empty());
  EXPECT_EQ(g.nodes[0].out[0].dims, (std::vector<int64_t>{2, 8}));
}

// CppShapeInferenceResult.HandleData: is_set, then one HandleShapeAndType (shape, dtype).
std::string handle_data(std::vector<int64_t> dims, int64_t dtype) {
  return field_varint(1, 1) +
         field_bytes(2, field_bytes(1, shape(dims)) + field_varint(2, uint64_t(dtype)));
}

TEST(TfFunction, HandleDataBesideTheFunctionDefGivesTheVariables) {
  // What the preload reads from the graph a function came from (TF_GetHandleShapeAndType)
  // where the FunctionDef has no handle_data: w1's [8,4] float variable; w2's bytes do not
  // read and leave it as it was; x, no resource, is not touched by what is given for it.
  Graph g;
  Stats s;
  std::string err;
  const std::string f = two_branches(false);
  const std::vector<std::string> handles = {handle_data({99}, 1), handle_data({8, 4}, 1),
                                            std::string("\x12\x05\x0a", 3)};
  ASSERT_EQ(function_parse(f.data(), f.size(), handles, &g, &err), Status::kOk) << err;
  EXPECT_EQ(g.format, Format::kTfFunctionDef);
  ASSERT_GE(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op, "Placeholder");  // x
  EXPECT_EQ(g.nodes[1].op, "VarHandleOp");  // w1
  EXPECT_EQ(g.nodes[1].attr_ints("shape"), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(g.nodes[2].op, "Placeholder");  // w2: its handle data did not read
  std::vector<std::string> warnings;
  ASSERT_EQ(shapes_infer(&g, {{"x", {2, 8}}}, &warnings, &err), Status::kOk) << err;
  for (const Node& n : g.nodes) {
    if (n.name == "m1") {
      EXPECT_DOUBLE_EQ(n.flops, 2.0 * 2 * 4 * 8);
    }
  }
  // Nothing given, or a list for another function (two arguments): the FunctionDef alone.
  for (const std::vector<std::string>& other :
       {std::vector<std::string>{}, std::vector<std::string>{"", handle_data({8, 4}, 1)}}) {
    Graph g2;
    ASSERT_EQ(function_parse(f.data(), f.size(), other, &g2, &err), Status::kOk) << err;
    EXPECT_EQ(g2.nodes[1].op, "Placeholder");
  }
}

TEST(TfFunction, NeverGuessedByAuto) {
  Graph g;
  std::string err;
  const std::string f = two_branches(true);
  // kAuto tries ONNX, SavedModel and GraphDef only; whatever it finds, it is not a function.
  if (model_parse(f.data(), f.size(), Format::kAuto, &g, &err) == Status::kOk) {
    EXPECT_NE(g.format, Format::kTfFunctionDef);
  }
}

TEST(TfFunction, ReadFromAFileNamedFdef) {
  const std::string f = two_branches(true);
  Graph g;
  std::string err;
  ASSERT_EQ(model_parse_file("step.fdef", "step.fdef", f, &g, &err), Status::kOk) << err;
  EXPECT_EQ(g.format, Format::kTfFunctionDef);
  EXPECT_EQ(g.path, "step.fdef");
}

// The train step that model.fit traces for tests/programs/keras_fit.py
// (tests/fixtures/gen/gen_tf_function.py): TF records the batch's shapes on the data
// arguments and nothing on the 14 resource arguments. The weights' shapes come from the
// step's own SGD updates (var -= lr * grad); the head's 4 classes appear nowhere in the
// step, so its kernel is [256, 1] and its bias [1], with a warning.
TEST(TfFunction, KerasTrainStepVariablesLearnedFromTheirUpdates) {
  std::string bytes;
  {
    const std::string path =
        std::string(PW_SOURCE_DIR) + "/tests/fixtures/functions/keras_train_step.fdef";
    FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_TRUE(f) << path;
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, got);
    std::fclose(f);
  }
  Graph g;
  Stats s;
  std::string err;
  std::vector<std::string> warnings;
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kTfFunctionDef, &g, &err), Status::kOk)
      << err;
  ASSERT_EQ(shapes_infer(&g, {}, &warnings, &err), Status::kOk) << err;
  ASSERT_EQ(stats_compute(g, &s, &err), Status::kOk) << err;
  EXPECT_EQ(s.heavy, 11u);
  EXPECT_EQ(s.costs, "flops");
  std::map<std::string, std::vector<int64_t>> out;
  for (const Node& n : g.nodes) {
    if (n.heavy) {
      EXPECT_GT(n.flops, 0) << n.name;
    }
    out[n.name] = n.shape;
  }
  using D = std::vector<int64_t>;
  // Forward: each branch [32,32] x [32,64]; its weight gradient [32,32]^T x [32,64].
  EXPECT_EQ(out["functional_1/branch0_1/MatMul"], D({32, 64}));
  EXPECT_EQ(out["gradient_tape/functional_1/branch3_1/MatMul/MatMul"], D({32, 64}));
  for (const Node& n : g.nodes) {
    if (n.name == "functional_1/branch2_1/MatMul") {
      EXPECT_DOUBLE_EQ(n.flops, 2.0 * 32 * 64 * 32);
    }
  }
  EXPECT_EQ(out["functional_1/concatenate_1/concat"], D({32, 256}));
  EXPECT_EQ(out["functional_1/head_1/MatMul"], D({32, 1}));
  // The loss's gradient is its second output (backprop), not the loss.
  EXPECT_EQ(out["gradient_tape/compile_loss/sparse_categorical_crossentropy/"
                "SparseSoftmaxCrossEntropyWithLogits/mul"],
            D({32, 1}));
  size_t guessed = 0;
  for (const std::string& w : warnings) guessed += w.find("unknown dims as 1") != std::string::npos;
  EXPECT_EQ(guessed, 2u);  // the head's kernel and bias
  // The branches stay side by side: 4 forward, 4 weight gradients.
  EXPECT_GE(s.max_level_width, 4u);
  EXPECT_GT(s.weighted_parallelism, 1.5);

  // The head's kernel given by the user (--input-shape) wins over the guess.
  Graph g2;
  warnings.clear();
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kTfFunctionDef, &g2, &err),
            Status::kOk);
  InputShapes given = {{"functional_1_head_1_cast_readvariableop_resource", {256, 4}},
                       {"functional_1_head_1_biasadd_readvariableop_resource", {4}}};
  ASSERT_EQ(shapes_infer(&g2, given, &warnings, &err), Status::kOk) << err;
  for (const Node& n : g2.nodes) {
    if (n.name == "functional_1/head_1/MatMul") {
      EXPECT_EQ(n.shape, D({32, 4}));
      EXPECT_DOUBLE_EQ(n.flops, 2.0 * 32 * 4 * 256);
    }
  }
  for (const std::string& w : warnings)
    EXPECT_EQ(w.find("unknown dims as 1"), std::string::npos) << w;
}

TEST(TfFunction, TruncatedOrCorruptBytesGiveAStatus) {
  const std::string f = two_branches(true);
  for (size_t n = 0; n < f.size(); ++n) {
    Graph g;
    std::string err;
    model_parse(f.data(), n, Format::kTfFunctionDef, &g, &err);  // any status, no crash
    std::string bad = f;
    bad[n] = static_cast<char>(bad[n] ^ 0x5a);
    model_parse(bad.data(), bad.size(), Format::kTfFunctionDef, &g, &err);
  }
  Graph g;
  std::string err;
  EXPECT_NE(model_parse("", 0, Format::kTfFunctionDef, &g, &err), Status::kOk);
  const std::string nameless = field_bytes(3, node("a", "MatMul", {}));
  EXPECT_EQ(model_parse(nameless.data(), nameless.size(), Format::kTfFunctionDef, &g, &err),
            Status::kBadFormat);
}

}  // namespace
}  // namespace pw::graph
