// The width statistics on hand-built graphs, each expectation worked out in its comment.
#include <gtest/gtest.h>

#include "core/report.h"
#include "graph/json_value.h"
#include "tests/unit/graph/test_util.h"

namespace pw::graph {
namespace {

using test::make_graph;
using test::Row;

Stats compute(const Graph& g) {
  Stats s;
  std::string err;
  EXPECT_EQ(stats_compute(g, &s, &err), Status::kOk) << err;
  return s;
}

TEST(GraphStats, ChainIsOneWide) {
  // x -> a -> b -> c -> d -> e, all heavy: H=5, L=5, W=1, one op per level.
  Graph g = make_graph({{"x", false, {}},
                        {"a", true, {"x"}},
                        {"b", true, {"a"}},
                        {"c", true, {"b"}},
                        {"d", true, {"c"}},
                        {"e", true, {"d"}}});
  Stats s = compute(g);
  EXPECT_EQ(s.heavy, 5u);
  EXPECT_EQ(s.layers, 5u);
  EXPECT_EQ(s.avg_width, 1u);
  EXPECT_EQ(s.max_level_width, 1u);
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 1.0);
  EXPECT_EQ(s.costs, "unit");
}

TEST(GraphStats, Diamond) {
  // a -> {b, c} -> d: depths 1, 2, 2, 3. H=4, L=3, W=floor(4/3)=1, level 2 holds 2.
  Graph g = make_graph(
      {{"a", true, {}}, {"b", true, {"a"}}, {"c", true, {"a"}}, {"d", true, {"b", "c"}}});
  Stats s = compute(g);
  EXPECT_EQ(s.heavy, 4u);
  EXPECT_EQ(s.layers, 3u);
  EXPECT_EQ(s.avg_width, 1u);
  EXPECT_EQ(s.max_level_width, 2u);
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 4.0 / 3.0);
}

TEST(GraphStats, KEqualBranches) {
  // Light source, k=4 branches of 3 heavy ops, light sink: H=12, L=3, W=4, 4 per level.
  std::vector<Row> rows{{"in", false, {}}};
  std::vector<std::string> tails;
  for (int b = 0; b < 4; ++b) {
    std::string prev = "in";
    for (int i = 0; i < 3; ++i) {
      std::string n = "b" + std::to_string(b) + "_" + std::to_string(i);
      rows.push_back({n, true, {prev}});
      prev = n;
    }
    tails.push_back(prev);
  }
  rows.push_back({"out", false, tails});
  Stats s = compute(make_graph(rows));
  EXPECT_EQ(s.heavy, 12u);
  EXPECT_EQ(s.layers, 3u);
  EXPECT_EQ(s.avg_width, 4u);
  EXPECT_EQ(s.max_level_width, 4u);
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 4.0);
}

std::vector<Row> branches(const std::vector<int>& lengths) {
  std::vector<Row> rows;
  for (size_t b = 0; b < lengths.size(); ++b) {
    std::string prev;
    for (int i = 0; i < lengths[b]; ++i) {
      std::string n = "br" + std::to_string(b) + "_" + std::to_string(i);
      rows.push_back(
          {n, true, prev.empty() ? std::vector<std::string>{} : std::vector<std::string>{prev}});
      prev = n;
    }
  }
  return rows;
}

TEST(GraphStats, UnequalBranches) {
  // Independent branches of 1, 1 and 7 heavy ops: H=9, L=7, W=floor(9/7)=1; level 1 has 3.
  Stats s = compute(make_graph(branches({1, 1, 7})));
  EXPECT_EQ(s.heavy, 9u);
  EXPECT_EQ(s.layers, 7u);
  EXPECT_EQ(s.avg_width, 1u);
  EXPECT_EQ(s.max_level_width, 3u);
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 9.0 / 7.0);
}

TEST(GraphStats, ThreeLongBranchesAverageWidthTwo) {
  // Independent branches of 5, 5 and 3 heavy ops: H=13, L=5, W=floor(13/5)=2 although three
  // branches run side by side at levels 1..3 (max level width 3); work/span = 2.6.
  Stats s = compute(make_graph(branches({5, 5, 3})));
  EXPECT_EQ(s.heavy, 13u);
  EXPECT_EQ(s.layers, 5u);
  EXPECT_EQ(s.avg_width, 2u);
  EXPECT_EQ(s.max_level_width, 3u);
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 2.6);
}

TEST(GraphStats, NoHeavyOpIsWidthOne) {
  // Only light ops: H=0, L=0, W=1 by definition, no level, weighted parallelism 1.
  Stats s = compute(make_graph({{"a", false, {}}, {"b", false, {"a"}}, {"c", false, {"a"}}}));
  EXPECT_EQ(s.heavy, 0u);
  EXPECT_EQ(s.layers, 0u);
  EXPECT_EQ(s.avg_width, 1u);
  EXPECT_EQ(s.max_level_width, 0u);
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 1.0);
}

TEST(GraphStats, LightNodesDoNotAddDepth) {
  // a -> relu -> relu -> b: the light ops between two heavy ones add nothing. L=2.
  Stats s = compute(make_graph(
      {{"a", true, {}}, {"r1", false, {"a"}}, {"r2", false, {"r1"}}, {"b", true, {"r2"}}}));
  EXPECT_EQ(s.layers, 2u);
  EXPECT_EQ(s.avg_width, 1u);
}

TEST(GraphStats, WeightedParallelismUsesFlopsWhenAllKnown) {
  // Diamond with FLOPs a=10, b=100, c=50, d=10: total 170, costliest path a-b-d = 120.
  Graph g = make_graph({{"a", true, {}, 10},
                        {"b", true, {"a"}, 100},
                        {"c", true, {"a"}, 50},
                        {"d", true, {"b", "c"}, 10}});
  Stats s = compute(g);
  EXPECT_EQ(s.costs, "flops");
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 170.0 / 120.0);
  // One heavy node without FLOPs: every cost falls back to 1 and the ratio is H/L = 4/3.
  g.nodes[2].flops = -1;
  s = compute(g);
  EXPECT_EQ(s.costs, "unit");
  EXPECT_DOUBLE_EQ(s.weighted_parallelism, 4.0 / 3.0);
}

TEST(GraphStats, HeavyByType) {
  Graph g = make_graph({{"a", true, {}}, {"b", true, {"a"}}, {"c", false, {"b"}}});
  g.nodes[1].op = "Conv";
  Stats s = compute(g);
  ASSERT_EQ(s.heavy_by_type.size(), 2u);
  EXPECT_EQ(s.heavy_by_type["MatMul"], 1u);
  EXPECT_EQ(s.heavy_by_type["Conv"], 1u);
}

TEST(GraphStats, HeavyFlopsByTypeSumTheKnownOnes) {
  // MatMul a=10, Conv b=100, MatMul c unknown, light d=7: the light node and the unknown
  // heavy one are not in the heavy sums.
  Graph g = make_graph({{"a", true, {}, 10},
                        {"b", true, {"a"}, 100},
                        {"c", true, {"b"}, -1},
                        {"d", false, {"c"}, 7}});
  g.nodes[1].op = "Conv";
  Stats s = compute(g);
  EXPECT_DOUBLE_EQ(s.heavy_flops, 110.0);
  ASSERT_EQ(s.heavy_flops_by_type.size(), 2u);
  EXPECT_DOUBLE_EQ(s.heavy_flops_by_type["MatMul"], 10.0);
  EXPECT_DOUBLE_EQ(s.heavy_flops_by_type["Conv"], 100.0);
}

TEST(GraphStats, CycleIsAnError) {
  Graph g =
      make_graph({{"a", true, {"c"}}, {"b", true, {"a"}}, {"c", true, {"b"}}, {"d", true, {}}});
  Stats s;
  std::string err;
  EXPECT_EQ(stats_compute(g, &s, &err), Status::kCycle);
  EXPECT_NE(err.find("cycle"), std::string::npos);
}

TEST(GraphStats, PredecessorOutOfRangeIsAnError) {
  Graph g = make_graph({{"a", true, {}}});
  g.nodes[0].preds.push_back(7);
  Stats s;
  std::string err;
  EXPECT_EQ(stats_compute(g, &s, &err), Status::kBadFormat);
}

TEST(GraphStats, LongChainDoesNotRecurse) {
  // 10^6 heavy ops in a chain: a recursive DFS would overflow the stack here.
  Graph g;
  g.nodes.resize(1000000);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    g.nodes[i].op = "MatMul";
    g.nodes[i].heavy = true;
    if (i) g.nodes[i].preds.push_back(static_cast<uint32_t>(i - 1));
  }
  Stats s = compute(g);
  EXPECT_EQ(s.layers, 1000000u);
  EXPECT_EQ(s.avg_width, 1u);
}

TEST(GraphStats, JsonHasTheDocumentedKeys) {
  Stats s = compute(make_graph({{"a", true, {}}, {"b", true, {}}}));
  std::string j = report::stats_json(s);
  for (const char* key : {"\"heavy\":2", "\"layers\":1", "\"avg_width\":2", "\"max_level_width\":2",
                          "\"weighted_parallelism\":2", "\"heavy_by_type\":{\"MatMul\":2}",
                          "\"source\":", "\"costs\":\"unit\"", "\"subgraphs\":[]"})
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
}

TEST(GraphStats, JsonEscapesTheModelsNames) {
  // A model path with a quote, a backslash, a newline and a control byte
  // still gives JSON that reads back to the same name.
  Stats s = compute(make_graph({{"a", true, {}}}));
  s.source = "dir\\m\"x\n\x01.onnx";
  const std::string j = report::stats_json(s);
  EXPECT_NE(j.find("\"source\":\"dir\\\\m\\\"x\\n\\u0001.onnx\""), std::string::npos) << j;
  json::Value v;
  std::string err;
  ASSERT_TRUE(json::parse(j, &v, &err)) << err << " in " << j;
  ASSERT_NE(v.get("source"), nullptr);
  EXPECT_EQ(v.get("source")->str, s.source);
}

}  // namespace
}  // namespace pw::graph
