// Internal: reading TensorFlow's protobuf values (DataType, TensorShapeProto,
// TensorProto, AttrValue) for the GraphDef / SavedModel / FunctionDef reader
// (tf_reader.cpp). Errors go to a Ctx: the first one wins.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/proto_reader.h"

namespace pw::graph::tf_values {

using proto::Reader;

struct Ctx {
  std::string* err;
  Status status = Status::kOk;
  bool bad(const std::string& why, Status s = Status::kBadFormat) {
    if (status == Status::kOk) {
      status = s;
      if (err) *err = "tensorflow: " + why;
    }
    return false;
  }
  bool check(const Reader& r, const char* what) {
    return r.ok() ? true : bad(std::string(what) + ": " + r.error());
  }
};

// TF DataType -> DType (ONNX numbering); reference types (+100) map like their base type.
DType tf_dtype(int64_t t);
// A TensorShapeProto's dims (-1 for unknown ones).
bool tf_shape(std::string_view bytes, int depth, std::vector<int64_t>* dims, Ctx* c);
// A TensorProto: dtype, dims, and its integer values when small.
bool tf_tensor(std::string_view bytes, int depth, TensorInfo* t, Ctx* c);
// An AttrValue.
bool tf_attr(std::string_view bytes, int depth, Attr* a, Ctx* c);

}  // namespace pw::graph::tf_values
