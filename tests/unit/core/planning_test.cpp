// The cost graph the plan is simulated on: what shape inference folds (constants,
// shape arithmetic) is marked folded, so the schedule does not run it.
#include <gtest/gtest.h>

#include <string>

#include "core/planning.h"
#include "governor/schedule.h"

namespace pw::planning {
namespace {

TEST(CostGraph, ShapeArithmeticIsFoldedHeavyOperatorsAreNot) {
  GraphSummary s;
  std::string err;
  ASSERT_TRUE(
      graph_summary(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/transformer_encoder.onnx",
                    &s, &err, "", nullptr))
      << err;
  ASSERT_TRUE(s.costs_known);
  size_t folded = 0, heavy_folded = 0, costed = 0;
  for (const gov::OpCost& o : s.cost_graph.ops) {
    folded += o.folded;
    heavy_folded += o.folded && o.flops > 0 && o.bytes > 1e4;
    costed += !o.folded;
  }
  // The encoder's reshapes take their targets from Shape/Gather/Concat chains.
  EXPECT_GT(folded, 0u);
  EXPECT_GT(costed, static_cast<size_t>(s.heavy));
  EXPECT_EQ(heavy_folded, 0u);
}

}  // namespace
}  // namespace pw::planning
