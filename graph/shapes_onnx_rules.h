// Internal: the helpers of the ONNX shape rules (shapes_onnx.cpp): windows, matmul,
// reductions, reshapes, slices, folded integer arithmetic, the element-wise op sets.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/shapes_ops.h"

namespace pw::graph::shape::onnx_rules {

using Dims = std::vector<int64_t>;

bool one_of(const std::string& op, std::initializer_list<const char*> names);

bool small(int64_t v);

// Integer values of a broadcast binary op, when both sides are folded.
template <typename F>
void fold_binary(const TI& a, const TI& b, TI* out, F f) {
  if (!a.has_values || !b.has_values || !out->known()) return;
  const int64_t n = out->elements();
  if (n < 0 || n > int64_t(kMaxFoldedElements)) return;
  // Only the common forms: equal element counts, or one side a single value.
  const size_t na = a.values.size(), nb = b.values.size();
  if (!((na == size_t(n) || na == 1) && (nb == size_t(n) || nb == 1))) return;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (size_t i = 0; i < size_t(n); ++i) {
    int64_t r = 0;
    if (!f(a.values[na == 1 ? 0 : i], b.values[nb == 1 ? 0 : i], &r)) return;
    v[i] = r;
  }
  out->values = std::move(v);
  out->has_values = true;
}

// The folded values of a tensor of dims `to` made from x's element by element: `from`
// maps an output index to x's (false: outside x, nothing folded). Empty when x or the
// result is larger than kMaxFoldedElements.
template <typename F>
std::vector<int64_t> values_gather(const TI& x, const std::vector<int64_t>& to, F from) {
  int64_t n = 1;
  for (int64_t d : to) {
    if (d < 0 || (d > 0 && n > int64_t(kMaxFoldedElements) / d)) return {};
    n *= d;
  }
  if (n == 0 || x.values.size() > kMaxFoldedElements) return {};
  std::vector<int64_t> at(to.size(), 0), src(x.dims.size(), 0), v;
  v.reserve(size_t(n));
  for (int64_t k = 0; k < n; ++k) {
    if (!from(at, &src)) return {};
    int64_t flat = 0;
    for (size_t i = 0; i < src.size(); ++i) flat = flat * x.dims[i] + src[i];
    if (flat < 0 || size_t(flat) >= x.values.size()) return {};
    v.push_back(x.values[size_t(flat)]);
    for (size_t i = at.size(); i-- > 0;) {  // next index, last axis fastest
      if (++at[i] < to[i]) break;
      at[i] = 0;
    }
  }
  return v;
}

// Spatial output size of a convolution or pooling window (ONNX conventions).
int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                   const std::string& auto_pad, bool ceil_mode);

// Kernel dims: the attribute, else the weight's spatial dims.
Dims kernel_of(const Node& n, const TI& w, int spatial);

TI conv_like(const Args& a, bool pool, bool transpose);

TI matmul(const TI& a, const TI& b);

// Axes from the attribute (older opsets) or from input k (opset 13+); false when unknown.
bool axes_of(const Args& a, const char* attr, size_t k, Dims* axes, bool* given);

TI reduce(const Args& a, const TI& x, bool axes_input);

TI reshape(const TI& x, const Dims& target, bool allowzero);

TI transpose(const TI& x, Dims perm);

TI concat(const std::vector<const TI*>& parts, int64_t axis_attr);

TI gather(const TI& data, const TI& idx, int64_t axis_attr);

TI squeeze(const TI& x, const Dims& axes, bool given);

TI unsqueeze(const TI& x, const Dims& axes);

TI slice(const TI& x, const Dims& starts, const Dims& ends, Dims axes, Dims steps);

bool sum_checked(int64_t a, int64_t b, int64_t* r);

bool sub_ok(int64_t a, int64_t b, int64_t* r);

bool mul_ok(int64_t a, int64_t b, int64_t* r);

bool div_ok(int64_t a, int64_t b, int64_t* r);

// Integer remainders: ONNX Mod's default (the divisor's sign, as Python's %) and fmod 1
// (the dividend's, as C's %).
bool mod_ok(int64_t a, int64_t b, int64_t* r);

bool fmod_ok(int64_t a, int64_t b, int64_t* r);

const std::unordered_set<std::string>& unary_ops();

const std::unordered_set<std::string>& binary_ops();

}  // namespace pw::graph::shape::onnx_rules
