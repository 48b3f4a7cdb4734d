// Names of graph/ statuses and formats, for messages and JSON.
#include "graph/graph.h"

namespace pw::graph {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kIoError:
      return "io error";
    case Status::kBadFormat:
      return "bad format";
    case Status::kUnsupported:
      return "unsupported";
    case Status::kCycle:
      return "cycle";
    case Status::kTooLarge:
      return "too large";
    case Status::kNoMemory:
      return "out of memory";
    case Status::kInternal:
      return "internal error";
  }
  return "unknown";
}

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
