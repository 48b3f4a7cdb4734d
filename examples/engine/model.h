// examples/engine/model: the engine's graph (operators, constants, shapes), read
// from ONNX (nodes, attributes and shapes from graph/'s shapes_infer) or the project's
// JSON through graph/, with stripped weights filled from a seed. Pure: no oneDNN, no threads; the
// reference tests use it too.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace pwe {

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
  bool integer = false;  // an ONNX integer tensor (shapes, indices): folded arithmetic truncates
  bool seeded = false;   // the model lacked its data: values made from the seed
};

constexpr int64_t kNoAxis = INT64_MIN;  // the op has no axis attribute: its type's default

struct Op {
  std::string name, type;            // type: ONNX op name
  std::vector<std::string> inputs;   // tensor names ("" = omitted optional input)
  std::vector<std::string> outputs;  // one output tensor per op here
  std::vector<int64_t> kernel, strides, pads, dilations;  // pads: top, left, bottom, right
  int64_t group = 1, axis = kNoAxis, trans_a = 0, trans_b = 0, ceil_mode = 0, count_include_pad = 0,
          keepdims = 1;
  float alpha = 1, beta = 1, epsilon = 1e-5f;
  float lo = -INFINITY, hi = INFINITY;  // Clip's bounds (attributes, or constant inputs)
  std::vector<int64_t> perm;            // Transpose (resolved: default reversed)
  std::vector<int64_t> axes;            // ReduceMean / Squeeze / Unsqueeze (resolved, sorted)
  std::vector<int64_t> starts, steps;   // Slice, resolved per dimension of the input
  std::string mode;                     // Pad's mode attribute
  std::vector<int> preds;               // ops producing this op's inputs
  // The output's dims as graph/ infers them (ONNX); JSON graphs use the engine's rules.
  std::vector<int64_t> shape;
  bool shaped = false;
};

struct Input {
  std::string name;
  std::vector<int64_t> dims;
  int64_t index_range = 0;  // > 0: an index input (Gather), values in [0, range)
};

struct Model {
  std::string name;
  std::vector<Op> ops;  // in topological order
  std::vector<Input> inputs;
  std::vector<std::string> const_names;  // parallel to consts
  std::vector<Tensor> consts;
  std::vector<std::string> outputs;
  std::vector<std::string> tensor_names;  // every activation: inputs first, then op outputs
  std::vector<std::vector<int64_t>> tensor_dims;

  int tensor(const std::string& n) const;  // index in tensor_names, -1 if none
  const Tensor* constant(const std::string& n) const;
};

struct LoadOptions {
  int batch = 0;       // 0: the model's
  int image_size = 0;  // 0: the model's
  uint64_t seed = 1;
};

// Parses, fills missing weights, orders the ops, infers every shape. False with
// *err on anything the engine does not support (named).
bool model_load_bytes(const void* data, size_t size, const LoadOptions& o, Model* m,
                      std::string* err);

// The inputs generated from the seed (floats in [-1, 1), indices in range).
std::vector<Tensor> model_make_inputs(const Model& m, uint64_t seed);

int64_t numel(const std::vector<int64_t>& d);

}  // namespace pwe
