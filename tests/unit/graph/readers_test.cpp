// Readers: the heavy-op table entry by entry, the Gather-on-constant rule, control inputs,
// subgraphs and TF function inlining, on protobuf and JSON written byte by byte here.
#include <gtest/gtest.h>

#include "core/report.h"
#include "graph/heavy_ops.h"
#include "tests/unit/graph/test_util.h"

namespace pw::graph {
namespace {

using namespace test;  // NOLINT: encoding helpers

// An op name that the entry matches: the name itself, or the prefix plus a suffix.
std::string example_of(const HeavyOp& e) {
  return std::string(e.name) + (e.prefix ? "V9" : "");
}

TEST(HeavyTable, EveryOnnxEntryIsHeavyOnAConstantOperand) {
  size_t n = 0;
  const HeavyOp* table = heavy_ops_table(&n);
  size_t checked = 0;
  for (size_t i = 0; i < n; ++i) {
    if (table[i].framework != Framework::kOnnx) continue;
    std::string op = example_of(table[i]);
    std::string g = onnx_initializer("W", {4, 4}) + onnx_input("x") +
                    onnx_node(op, {"W", "x"}, {"y"}, "n") + onnx_node("Relu", {"y"}, {"z"}, "r");
    Stats s = stats_of(onnx_model(g), Format::kOnnx);
    EXPECT_EQ(s.heavy, 1u) << op << " " << s.note;
    EXPECT_EQ(s.heavy_by_type[op], 1u) << op;
    ++checked;
  }
  EXPECT_EQ(checked, 17u);  // 14 compute ops + 3 Gather variants (docs/design.md)
}

TEST(HeavyTable, EveryTfEntryIsHeavyOnAVariableOperand) {
  size_t n = 0;
  const HeavyOp* table = heavy_ops_table(&n);
  size_t checked = 0;
  for (size_t i = 0; i < n; ++i) {
    if (table[i].framework != Framework::kTf) continue;
    std::string op = example_of(table[i]);
    std::string g = tf_graph({tf_node("w", "VariableV2", {}), tf_node("x", "Placeholder", {}),
                              tf_node("n", op, {"w", "x"}), tf_node("r", "Relu", {"n"})});
    Stats s = stats_of(g, Format::kTfGraphDef);
    EXPECT_EQ(s.heavy, 1u) << op << " " << s.note;
    ++checked;
  }
  EXPECT_GE(checked, 30u);
}

TEST(HeavyTable, LightOpsAreLight) {
  for (const char* op :
       {"Relu", "Add", "Concat", "MaxPool", "BatchNormalization", "Softmax", "Shape"}) {
    EXPECT_EQ(heavy_op_find(Framework::kOnnx, op), nullptr) << op;
    EXPECT_EQ(heavy_op_find(Framework::kTf, op), nullptr) << op;
  }
  // A prefix row must not match a shorter name or an unrelated one.
  EXPECT_EQ(heavy_op_find(Framework::kTf, "BatchMat"), nullptr);
  EXPECT_EQ(heavy_op_find(Framework::kTf, "Conv2DTranspose"), nullptr);
}

TEST(OnnxReader, GatherOnGraphInputIsLight) {
  for (const char* op : {"Gather", "GatherND", "GatherElements"}) {
    std::string g =
        onnx_input("table") + onnx_input("ids") + onnx_node(op, {"table", "ids"}, {"y"}, "g");
    EXPECT_EQ(stats_of(onnx_model(g), Format::kOnnx).heavy, 0u) << op;
  }
}

TEST(OnnxReader, GatherOnConstantNodeAndStrippedOrExternalInitializerIsHeavy) {
  std::string g = onnx_node("Constant", {}, {"c"}, "const") +
                  onnx_initializer("stripped", {100, 8}) +
                  onnx_initializer("ext", {100, 8}, /*external=*/true) + onnx_input("ids") +
                  onnx_node("Gather", {"c", "ids"}, {"a"}, "g1") +
                  onnx_node("Gather", {"stripped", "ids"}, {"b"}, "g2") +
                  onnx_node("Gather", {"ext", "ids"}, {"c2"}, "g3") +
                  onnx_node("Concat", {"a", "b", "c2"}, {"cat"}, "cat") +
                  onnx_initializer("W", {24, 4}) + onnx_node("MatMul", {"cat", "W"}, {"out"}, "mm");
  // Embedding-heavy: three lookups side by side, then one MatMul: H=4, L=2, W=2, level 1 = 3.
  Stats s = stats_of(onnx_model(g), Format::kOnnx);
  EXPECT_EQ(s.heavy, 4u) << s.note;
  EXPECT_EQ(s.heavy_by_type["Gather"], 3u);
  EXPECT_EQ(s.layers, 2u);
  EXPECT_EQ(s.avg_width, 2u);
  EXPECT_EQ(s.max_level_width, 3u);
}

TEST(OnnxReader, ControlFlowBodiesAreSubgraphsAndTheirOuterReadsAreEdges) {
  // Main: conv1 -> If -> conv2, where only the If's then-branch reads conv1's output.
  // The branch holds one Conv reading an outer initializer. Main: H=2 (the branch's Conv is
  // not main work), L=2 because the If depends on conv1 through its body. Subgraphs: 2.
  std::string then_body =
      onnx_node("Conv", {"h1", "W"}, {"t"}, "inner_conv") + field_bytes(12, field_bytes(1, "t"));
  std::string else_body = onnx_node("Identity", {"x"}, {"e"}, "inner_id");
  std::string g = onnx_initializer("W", {4, 4, 1, 1}) + onnx_input("x") + onnx_input("cond") +
                  onnx_node("Conv", {"x", "W"}, {"h1"}, "conv1") +
                  onnx_node("If", {"cond"}, {"o"}, "if",
                            onnx_graph_attr("then_branch", then_body) +
                                onnx_graph_attr("else_branch", else_body)) +
                  onnx_node("Conv", {"o", "W"}, {"h2"}, "conv2");
  Graph graph;
  std::string err;
  std::string bytes = onnx_model(g);
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kOnnx, &graph, &err), Status::kOk)
      << err;
  Stats s;
  ASSERT_EQ(stats_compute(graph, &s, &err), Status::kOk) << err;
  EXPECT_EQ(s.heavy, 2u);
  EXPECT_EQ(s.layers, 2u);
  ASSERT_EQ(s.subgraphs.size(), 2u);
  EXPECT_EQ(s.subgraphs[0].name, "/if/then_branch");
  EXPECT_EQ(s.subgraphs[0].heavy, 1u);  // the inner Conv: heavy, its W found in the outer scope
  EXPECT_EQ(s.subgraphs[1].heavy, 0u);
  EXPECT_NE(report::stats_json(s).find("\"subgraphs\":[{"), std::string::npos);
}

TEST(TfReader, ControlInputsAreEdges) {
  // b waits for a only through "^a": still a chain, L=2, W=1. Without it: L=1, W=2.
  auto graph_with = [](const std::string& dep) {
    return tf_graph({tf_node("x", "Placeholder", {}), tf_node("w", "Const", {}),
                     tf_node("a", "MatMul", {"x", "w"}),
                     tf_node("b", "MatMul", {"x:0", "w", dep})});
  };
  Stats chained = stats_of(graph_with("^a"), Format::kTfGraphDef);
  EXPECT_EQ(chained.layers, 2u);
  EXPECT_EQ(chained.avg_width, 1u);
  Stats parallel = stats_of(graph_with("^x"), Format::kTfGraphDef);
  EXPECT_EQ(parallel.layers, 1u);
  EXPECT_EQ(parallel.avg_width, 2u);
}

TEST(TfReader, GatherNeedsVariableOrConstantParams) {
  // GatherV2 on a variable behind an Identity ("emb/read" in frozen graphs) is an embedding
  // lookup; GatherV2 on a placeholder is not.
  std::string g = tf_graph(
      {tf_node("emb", "VariableV2", {}), tf_node("emb/read", "Identity", {"emb"}),
       tf_node("ids", "Placeholder", {}), tf_node("t", "Placeholder", {}),
       tf_node("axis", "Const", {}), tf_node("g1", "GatherV2", {"emb/read", "ids", "axis"}),
       tf_node("g2", "GatherV2", {"t", "ids", "axis"})});
  Stats s = stats_of(g, Format::kTfGraphDef);
  EXPECT_EQ(s.heavy, 1u);
  EXPECT_EQ(s.heavy_by_type["GatherV2"], 1u);
}

TEST(TfReader, PartitionedCallsAreInlined) {
  // main: x -> StatefulPartitionedCall(f=body) -> MatMul. body: two MatMuls in a chain,
  // written with function-body input names ("mm1:product:0", arg names). The executed graph
  // is the inlined one: H=3, L=3. The library function is also its own subgraph: H=2, L=2.
  std::string lib = tf_function(
      "body", {"in", "w"}, {{"out", "mm2:product:0"}},
      {tf_node("mm1", "MatMul", {"in", "w"}), tf_node("mm2", "MatMul", {"mm1:product:0", "w"})});
  std::string g = tf_graph({tf_node("x", "Placeholder", {}), tf_node("w", "Const", {}),
                            tf_node("call", "StatefulPartitionedCall", {"x", "w"}, "body"),
                            tf_node("after", "MatMul", {"call:0", "w"})},
                           lib);
  Stats s = stats_of(g, Format::kTfGraphDef);
  EXPECT_EQ(s.heavy, 3u) << s.note;
  EXPECT_EQ(s.layers, 3u);
  ASSERT_EQ(s.subgraphs.size(), 1u);
  EXPECT_EQ(s.subgraphs[0].name, "body");
  EXPECT_EQ(s.subgraphs[0].heavy, 2u);
  EXPECT_EQ(s.subgraphs[0].layers, 2u);
}

TEST(TfReader, SavedModelReadsTheFirstMetaGraph) {
  std::string g =
      tf_graph({tf_node("x", "Placeholder", {}), tf_node("w", "Const", {}),
                tf_node("a", "Conv2D", {"x", "w"}), tf_node("b", "Conv2D", {"x", "w"})});
  std::string sm = field_varint(1, 1) + field_bytes(2, field_bytes(2, g));
  Stats s = stats_of(sm, Format::kTfSavedModel);
  EXPECT_EQ(s.heavy, 2u) << s.note;
  EXPECT_EQ(s.avg_width, 2u);
  EXPECT_EQ(s.source.rfind("tf-savedmodel:", 0), 0u);
}

TEST(JsonReader, SchemaHeavyFlagsFlopsAndControlEdges) {
  std::string j = R"({"name": "toy", "constants": ["E"], "nodes": [
    {"name": "in", "op": "Input"},
    {"name": "emb", "op": "Gather", "inputs": ["E", "in"]},
    {"name": "g2", "op": "Gather", "inputs": ["in", "in"]},
    {"name": "a", "op": "Custom", "inputs": ["emb"], "heavy": true, "flops": 10},
    {"name": "b", "op": "MatMul", "inputs": ["emb:0", "^a"], "heavy": true, "flops": 30}
  ]})";
  Graph g;
  std::string err;
  ASSERT_EQ(model_parse(j.data(), j.size(), Format::kAuto, &g, &err), Status::kOk) << err;
  EXPECT_EQ(g.format, Format::kJson);
  EXPECT_EQ(g.name, "toy");
  Stats s;
  ASSERT_EQ(stats_compute(g, &s, &err), Status::kOk);
  // emb (Gather on constant E) is heavy but has no flops -> unit costs; g2 is light.
  EXPECT_EQ(s.heavy, 3u);
  EXPECT_EQ(s.layers, 3u);  // emb -> a -> b via the control edge
  EXPECT_EQ(s.costs, "unit");
}

TEST(JsonReader, RejectsMalformedDocuments) {
  for (const char* j :
       {"{}", "{\"nodes\": 3}", "{\"nodes\": [{\"op\": \"X\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"op\": \"X\"}, {\"name\": \"a\", \"op\": \"Y\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"op\": \"X\", \"heavy\": 1}]}", "{\"nodes\": [",
        "{\"nodes\": []} trailing"}) {
    Graph g;
    std::string err;
    EXPECT_EQ(model_parse(j, std::string(j).size(), Format::kJson, &g, &err), Status::kBadFormat)
        << j;
    EXPECT_FALSE(err.empty());
  }
}

}  // namespace
}  // namespace pw::graph
