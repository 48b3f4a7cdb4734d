// A session's graph replaces the plan unless PARWIDTH_MODEL is set or it has no heavy
// operators (governor/graph_adoption.h; hooks/tf.cpp, ort.cpp, engine.cpp ask it).
#include "governor/graph_adoption.h"

#include <gtest/gtest.h>

#include <string>

namespace pw::gov {
namespace {

TEST(GraphAdoption, Table) {
  struct Case {
    const char* what;
    bool model_given;
    long heavy;
    GraphAdoption want;
  };
  const Case kCases[] = {
      {"a graph with heavy operators is adopted", false, 12, GraphAdoption::kAdopt},
      {"one heavy operator is enough", false, 1, GraphAdoption::kAdopt},
      {"no heavy operator: plan unchanged", false, 0, GraphAdoption::kNoHeavy},
      {"PARWIDTH_MODEL wins over a heavy graph", true, 12, GraphAdoption::kModelGiven},
      {"PARWIDTH_MODEL wins over an empty graph", true, 0, GraphAdoption::kModelGiven},
      {"asked before reading, PARWIDTH_MODEL set", true, -1, GraphAdoption::kModelGiven},
      {"asked before reading, no PARWIDTH_MODEL: read it", false, -1, GraphAdoption::kAdopt},
  };
  for (const Case& c : kCases) {
    const GraphAdoption a = graph_adoption(c.model_given, c.heavy);
    EXPECT_EQ(a, c.want) << c.what;
    EXPECT_EQ(std::string(graph_adoption_text(a)).empty(), a == GraphAdoption::kAdopt) << c.what;
  }
}

TEST(GraphRecalled, Table) {
  struct Case {
    const char* what;
    bool model_given, graph_known, recalled;
  };
  const Case kCases[] = {
      {"nothing known yet: the remembered graph plans", false, false, true},
      {"PARWIDTH_MODEL given: its width stands", true, false, false},
      {"this run's graph already planned", false, true, false},
      {"both", true, true, false},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(graph_recalled(c.model_given, c.graph_known), c.recalled) << c.what;
}

}  // namespace
}  // namespace pw::gov
