// The committed model fixtures (tests/fixtures/models) give the numbers in graph/README.md.
#include <gtest/gtest.h>

#include "core/model_file.h"
#include "graph/graph.h"

namespace pw::graph {
namespace {

struct Expect {
  const char* file;
  uint64_t heavy, layers, avg_width, max_level;
  double weighted;
};

Stats load(const std::string& rel) {
  Graph g;
  Stats s;
  std::string err;
  EXPECT_EQ(
      files::model_load(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/" + rel, &g, &err),
      Status::kOk)
      << err;
  EXPECT_EQ(stats_compute(g, &s, &err), Status::kOk) << err;
  return s;
}

TEST(Fixtures, DenseNet121HasAverageWidthOne) {
  // The paper's table: DenseNet-121's average width is 1 (every conv waits for the last).
  Stats s = load("densenet121.onnx");
  EXPECT_EQ(s.avg_width, 1u);
  EXPECT_EQ(s.heavy, 121u);  // 120 convolutions and the classifier's Gemm
  EXPECT_EQ(s.layers, 121u);
}

TEST(Fixtures, PinnedNumbers) {
  const Expect cases[] = {
      {"resnet50.onnx", 54, 50, 1, 2, 54.0 / 50},
      {"inception_v3.onnx", 95, 48, 1, 4, 95.0 / 48},
      {"googlenet.onnx", 58, 22, 2, 4, 58.0 / 22},
      {"densenet121.onnx", 121, 121, 1, 1, 1.0},
      {"squeezenet1_0.onnx", 26, 18, 1, 2, 26.0 / 18},
      {"tf_inception_block.pb", 7, 3, 2, 4, 7.0 / 3},
      {"tf_inception_block_savedmodel", 7, 3, 2, 4, 7.0 / 3},
      {"tf_encoder_block.pb", 8, 6, 1, 3, 8.0 / 6},
      {"tf_encoder_block_savedmodel", 8, 6, 1, 3, 8.0 / 6},
      {"tf_wide_deep.pb", 7, 4, 1, 4, 7.0 / 4},
      {"tf_wide_deep_savedmodel", 7, 4, 1, 4, 7.0 / 4},
  };
  for (const Expect& e : cases) {
    Stats s = load(e.file);
    EXPECT_EQ(s.heavy, e.heavy) << e.file;
    EXPECT_EQ(s.layers, e.layers) << e.file;
    EXPECT_EQ(s.avg_width, e.avg_width) << e.file;
    EXPECT_EQ(s.max_level_width, e.max_level) << e.file;
    EXPECT_NEAR(s.weighted_parallelism, e.weighted, 1e-9) << e.file;
  }
}

// With shapes inferred (as `parwidth width` does), every fixture's heavy ops have FLOPs.
// Printed by `build/bin/parwidth width tests/fixtures/models/X --json`; graph/README.md.
TEST(Fixtures, CostsFromInferredShapes) {
  struct Cost {
    const char* file;
    double weighted, work, span;
  };
  const Cost cases[] = {
      {"resnet50.onnx", 1.09651, 8.20652e9, 7.48569e9},
      {"inception_v3.onnx", 1.50973, 1.14689e10, 7.58631e9},
      {"googlenet.onnx", 1.23506, 3.01581e9, 2.4357e9},
      {"densenet121.onnx", 1.0, 5.71277e9, 5.71277e9},
      {"squeezenet1_0.onnx", 1.06447, 1.65169e9, 1.55089e9},
      {"tf_inception_block.pb", 1.80769, 1.77562e6, 966416},
      {"tf_inception_block_savedmodel", 1.80769, 1.77562e6, 966416},
      {"tf_encoder_block.pb", 1.28571, 38432, 30240},
      {"tf_encoder_block_savedmodel", 1.28571, 38433, 30240},
      {"tf_wide_deep.pb", 1.0167, 4374, 4296},
      {"tf_wide_deep_savedmodel", 1.0167, 4375, 4296},
  };
  for (const Cost& c : cases) {
    Graph g;
    Stats s;
    std::string err;
    std::vector<std::string> warnings;
    ASSERT_EQ(files::model_load(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/" + c.file, &g,
                                &err),
              Status::kOk)
        << err;
    ASSERT_EQ(shapes_infer(&g, {}, &warnings, &err), Status::kOk) << err;
    ASSERT_EQ(stats_compute(g, &s, &err), Status::kOk) << err;
    EXPECT_EQ(s.costs, "flops") << c.file;
    EXPECT_NEAR(s.weighted_parallelism, c.weighted, 1e-5 * c.weighted) << c.file;
    EXPECT_NEAR(s.work_flops, c.work, 1e-5 * c.work) << c.file;
    EXPECT_NEAR(s.span_flops, c.span, 1e-5 * c.span) << c.file;
    // ONNX fixtures: every operator has a rule.
    if (std::string(c.file).find(".onnx") != std::string::npos) {
      EXPECT_EQ(s.known_flops_nodes, s.nodes) << c.file;
      EXPECT_TRUE(warnings.empty()) << c.file << ": " << warnings[0];
    }
  }
}

TEST(Fixtures, WideAndDeepCountsItsEmbeddingLookups) {
  // Three embedding tables and the wide part's sparse segment mean are heavy; in the frozen
  // graph the lookups are GatherV2 on constants, in the SavedModel ResourceGather.
  Stats frozen = load("tf_wide_deep.pb");
  EXPECT_EQ(frozen.heavy_by_type["GatherV2"], 3u);
  Stats saved = load("tf_wide_deep_savedmodel");
  EXPECT_EQ(saved.heavy_by_type["ResourceGather"], 3u);
  EXPECT_FALSE(saved.subgraphs.empty());  // the library functions are reported too
}

TEST(Fixtures, SavedModelFileAndDirectoryAgree) {
  Stats dir = load("tf_encoder_block_savedmodel");
  Stats file = load("tf_encoder_block_savedmodel/saved_model.pb");
  EXPECT_EQ(dir.heavy, file.heavy);
  EXPECT_EQ(dir.layers, file.layers);
}

}  // namespace
}  // namespace pw::graph
