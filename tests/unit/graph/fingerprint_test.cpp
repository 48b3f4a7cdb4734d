// The graph fingerprint, the key of measured plans: the same model read from a
// file or from bytes gets the same one; names do not matter; a different
// shape, cost or edge gives another.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/model_file.h"
#include "graph/graph.h"
#include "test_util.h"

namespace pw::graph {
namespace {

std::string fixture(const std::string& name) {
  return std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/" + name;
}

std::string fingerprint_of(Graph g, const InputShapes& shapes = {}) {
  std::string err;
  EXPECT_EQ(shapes_infer(&g, shapes, nullptr, &err), Status::kOk) << err;
  return fingerprint(g);
}

TEST(Fingerprint, FileAndBytesAgreeAndShapesCount) {
  const std::string path = fixture("squeezenet1_0.onnx");
  Graph from_file, from_bytes;
  std::string err;
  ASSERT_EQ(files::model_load(path, &from_file, &err), Status::kOk) << err;
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  ASSERT_EQ(model_parse(bytes.data(), bytes.size(), Format::kAuto, &from_bytes, &err), Status::kOk)
      << err;
  const std::string a = fingerprint_of(from_file);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_EQ(a, fingerprint_of(from_bytes));
  // A batch of 4 changes every operator's cost: another graph to tune.
  const std::string input = from_file.inputs.at(0);
  EXPECT_NE(a, fingerprint_of(from_file, {{input, {4, 3, 224, 224}}}));
  Graph other;
  ASSERT_EQ(files::model_load(fixture("googlenet.onnx"), &other, &err), Status::kOk) << err;
  EXPECT_NE(a, fingerprint_of(other));
}

TEST(Fingerprint, NamesDoNotMatterEdgesAndCostsDo) {
  using test::make_graph;
  const Graph g = make_graph({{"a", true, {}, 1e6}, {"b", true, {"a"}, 1e6}, {"c", true, {}, 1e6}});
  const Graph renamed =
      make_graph({{"x", true, {}, 1e6}, {"y", true, {"x"}, 1e6}, {"z", true, {}, 1e6}});
  const Graph rewired =
      make_graph({{"a", true, {}, 1e6}, {"b", true, {}, 1e6}, {"c", true, {"b"}, 1e6}});
  const Graph costlier =
      make_graph({{"a", true, {}, 2e6}, {"b", true, {"a"}, 1e6}, {"c", true, {}, 1e6}});
  EXPECT_EQ(fingerprint(g), fingerprint(renamed));
  EXPECT_NE(fingerprint(g), fingerprint(rewired));
  EXPECT_NE(fingerprint(g), fingerprint(costlier));
  EXPECT_NE(fingerprint(g), fingerprint(Graph{}));
}

}  // namespace
}  // namespace pw::graph
