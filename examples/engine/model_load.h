// examples/engine/model_load: what the model's readers share (model.cpp loads through
// them): a reader per format, the shape pass, and seeded data for what a model lacks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "examples/engine/model.h"

namespace pwe::load {

// *err = why (when err is not null); false.
bool fail(std::string* err, const std::string& why);

// Fills a tensor whose data the model lacks: He-uniform for weights (fan-in from dims
// 1..), small values for 1-D tensors (biases), so deep stacks keep finite activations.
void fill(Tensor* t, const std::string& name, uint64_t seed);

// Input dims at the batch and image size the options ask for (0: the model's).
void apply_sizes(Model* m, const LoadOptions& o);

// Synthetic weights a JSON op declares through attrs (made once input shapes are known).
struct JsonWeights {
  int64_t channels = 0;  // Conv output channels
  int64_t units = 0;     // MatMul / Gemm output features
  bool bias = true;
};

// ONNX (model_onnx.cpp): ops with graph/'s attributes and shapes, initializers and
// folded values as constants.
bool onnx_read(std::string_view bytes, const LoadOptions& o, Model* m, std::string* err);

// The project's JSON (model_json.cpp): ops, and the synthetic weights their attrs declare.
bool json_read(std::string_view bytes, const LoadOptions& o, Model* m,
               std::map<std::string, JsonWeights>* jw, std::string* err);

// Every op's output shape, in order (model_shapes.cpp): checks what the executors
// support, resolves axes, pads and Slice's ranges, and makes the JSON ops' weights.
bool infer(Model* m, const std::map<std::string, JsonWeights>& jw, uint64_t seed, std::string* err);

}  // namespace pwe::load
