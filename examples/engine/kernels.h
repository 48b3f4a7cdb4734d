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

// 2-D max pooling of an N x C x H x W tensor into yd (N x C x OH x OW, as the
// model's shapes say, ceil mode included): window k (kh, kw), strides s,
// padding before pl (top, left); padded positions never win. oneDNN 2.6's
// pooling on plain layouts is its reference loop (simple_nchw, ~10 ns per
// compared element: 40% of SqueezeNet's time at 1 thread), where frameworks'
// own pooling kernels (ORT's, PyTorch's, TensorFlow's) stream; this loop
// runs at their pace.
void max_pool(const float* x, const std::vector<int64_t>& xd, const int64_t k[2],
              const int64_t s[2], const int64_t pl[2], float* y, const std::vector<int64_t>& yd);

}  // namespace pwe
