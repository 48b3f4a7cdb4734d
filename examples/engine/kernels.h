// examples/engine/kernels: the plain-loop operators (those oneDNN 2.6 has no primitive for),
// on plain row-major f32 buffers. The engine runs them (OpenMP-parallel, so the worker's team
// size decides their speed too).
#pragma once

#include <cstdint>
#include <vector>

namespace pwe {

enum class Binary { kAdd, kSub, kMul, kDiv, kPow };

// Numpy broadcasting of a and b to y (ranks aligned on the right). integer: Div truncates.
void binary_broadcast(Binary op, const float* a, const std::vector<int64_t>& ad, const float* b,
                      const std::vector<int64_t>& bd, float* y, const std::vector<int64_t>& yd,
                      bool integer);

// ONNX Gather: y = data indexed along axis by idx (n values; negatives count from the end,
// out-of-range ones are clamped so a bad input cannot read outside the table).
void gather(const float* data, const std::vector<int64_t>& dd, int64_t axis, const float* idx,
            int64_t n, float* y);

// ONNX Slice with every dimension resolved: y[i] = x[start[d] + i[d] * step[d]].
void slice(const float* x, const std::vector<int64_t>& xd, const std::vector<int64_t>& start,
           const std::vector<int64_t>& step, float* y, const std::vector<int64_t>& yd);

void erf(const float* x, int64_t n, float* y);

}  // namespace pwe
