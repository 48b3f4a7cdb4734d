// Names of graph/ formats, for messages and JSON.
#include "graph/graph.h"

namespace pw::graph {

const char* format_name(Format f) {
  switch (f) {
    case Format::kAuto:
      return "auto";
    case Format::kOnnx:
      return "onnx";
    case Format::kTfGraphDef:
      return "tf-graphdef";
    case Format::kTfSavedModel:
      return "tf-savedmodel";
    case Format::kJson:
      return "json";
    case Format::kTfFunctionDef:
      return "tf-functiondef";
  }
  return "unknown";
}

}  // namespace pw::graph
