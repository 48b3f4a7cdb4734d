// Internal: per-operator shape rules (shapes_onnx.cpp, shapes_tf.cpp) and the helpers they
// share. shapes.cpp walks the graph and calls these; costs.cpp reads the results.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace pw::graph::shape {

using TI = TensorInfo;

// Dims above this are treated as unknown: no real tensor has them, and products of a few
// stay far from int64 overflow.
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr int kMaxRank = 64;

// The inputs of one node as the rules see them: in[k] parallel to node.inputs.
struct Args {
  const Node& node;
  const std::vector<TI>& in;

  size_t size() const { return in.size(); }
  bool has(size_t k) const { return k < in.size() && !node.inputs[k].empty(); }
  const TI& operator[](size_t k) const;
};

TI unknown(DType t = DType::kUnknown);
TI of_dims(std::vector<int64_t> dims, DType t);
TI of_rank(int rank, DType t);                                                 // every dim unknown
TI scalar_values(std::vector<int64_t> v, std::vector<int64_t> dims, DType t);  // folded
int64_t axis_norm(int64_t axis, int rank);  // -1 when out of range
bool dim_ok(int64_t d);                     // 0 <= d <= kMaxDim
// Numpy broadcasting of a and b; unknown rank if either rank is unknown.
TI broadcast(const TI& a, const TI& b);
// A 1-D integer tensor's values (a Reshape target, axes): false when not known.
bool values_of(const TI& t, std::vector<int64_t>* v);

// Outputs of node for the ONNX (resp. TF) operator set; false when the op has no rule (the
// caller warns once per type). Rules set what they can and leave the rest unknown.
bool onnx_infer(const Args& a, std::vector<TI>* out);
bool tf_infer(const Args& a, std::vector<TI>* out);
// The TF ops of training steps (shapes_tf_train.cpp); tf_infer asks it last.
bool tf_train_infer(const Args& a, std::vector<TI>* out);

}  // namespace pw::graph::shape
