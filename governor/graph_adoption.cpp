// governor/graph_adoption: a session's graph replaces the plan, unless the user named
// the model or the graph has nothing to plan from.
#include "governor/graph_adoption.h"

namespace pw::gov {

GraphAdoption graph_adoption(bool model_given, long heavy) {
  if (model_given) return GraphAdoption::kModelGiven;
  if (heavy == 0) return GraphAdoption::kNoHeavy;
  return GraphAdoption::kAdopt;
}

bool graph_recalled(bool model_given, bool graph_known) {
  return !model_given && !graph_known;
}

const char* graph_adoption_text(GraphAdoption a) {
  switch (a) {
    case GraphAdoption::kAdopt:
      return "";
    case GraphAdoption::kModelGiven:
      return "PARWIDTH_MODEL given; the plan keeps that model's width";
    case GraphAdoption::kNoHeavy:
      return "nothing to plan from; plan unchanged";
  }
  return "";
}

}  // namespace pw::gov
