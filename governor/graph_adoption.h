// governor/graph_adoption: whether a model graph a framework hands over (a
// TensorFlow session's, an ONNX Runtime session's, the engine's) replaces the
// plan. Pure: values in, values out.
#pragma once

namespace pw::gov {

enum class GraphAdoption {
  kAdopt,       // plan again from the session's graph
  kModelGiven,  // PARWIDTH_MODEL named the model: its width stands
  kNoHeavy,     // the graph has no heavy operator: nothing to plan from
};

// model_given: PARWIDTH_MODEL is set. heavy: the graph's heavy operators, or
// -1 while the graph is not read yet (a hook may ask before reading it, to
// spare the work when PARWIDTH_MODEL decides anyway).
GraphAdoption graph_adoption(bool model_given, long heavy);

// Whether a graph an earlier run of the program remembered (TensorFlow's
// function graphs, runtime/functions) is planned from before the eager
// context is sized: not when PARWIDTH_MODEL names the model or the plan
// already has a graph of this run.
bool graph_recalled(bool model_given, bool graph_known);

// The report's reason for a graph that was not adopted ("" for kAdopt).
const char* graph_adoption_text(GraphAdoption a);

}  // namespace pw::gov
