// examples/engine/kernels: plain loops for the operators oneDNN lacks (see kernels.h).
#include "examples/engine/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace pwe {
namespace {

int64_t count(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// Strides of dims d seen at rank r (right-aligned), 0 where d broadcasts.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& d, size_t r) {
  std::vector<int64_t> s(r, 0);
  int64_t st = 1;
  for (size_t k = 0; k < d.size(); ++k) {
    const size_t i = d.size() - 1 - k;
    s[r - 1 - k] = d[i] == 1 ? 0 : st;
    st *= d[i];
  }
  return s;
}

float apply(Binary op, float a, float b, bool integer) {
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    case Binary::kDiv:
      return integer ? std::trunc(a / b) : a / b;
    case Binary::kPow:
      return std::pow(a, b);
  }
  return 0;
}

}  // namespace

void binary_broadcast(Binary op, const float* a, const std::vector<int64_t>& ad, const float* b,
                      const std::vector<int64_t>& bd, float* y, const std::vector<int64_t>& yd,
                      bool integer) {
  const size_t r = yd.size();
  if (r == 0) {  // scalars
    y[0] = apply(op, a[0], b[0], integer);
    return;
  }
  const std::vector<int64_t> sa = broadcast_strides(ad, r), sb = broadcast_strides(bd, r);
  const int64_t n = count(yd);
  const int64_t inner = yd[r - 1], ia = sa[r - 1], ib = sb[r - 1];
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < (inner ? n / inner : 0); ++row) {
    int64_t oa = 0, ob = 0, rest = row;
    for (size_t k = r - 1; k-- > 0;) {
      const int64_t i = rest % yd[k];
      rest /= yd[k];
      oa += i * sa[k];
      ob += i * sb[k];
    }
    float* out = y + row * inner;
    for (int64_t j = 0; j < inner; ++j) out[j] = apply(op, a[oa + j * ia], b[ob + j * ib], integer);
  }
}

void gather(const float* data, const std::vector<int64_t>& dd, int64_t axis, const float* idx,
            int64_t n, float* y) {
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= dd[static_cast<size_t>(k)];
  for (size_t k = static_cast<size_t>(axis) + 1; k < dd.size(); ++k) inner *= dd[k];
  const int64_t rows = dd[static_cast<size_t>(axis)];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k) {
      int64_t r = static_cast<int64_t>(idx[k]);
      if (r < 0) r += rows;
      r = std::clamp<int64_t>(r, 0, rows - 1);
      memcpy(y + (o * n + k) * inner, data + (o * rows + r) * inner,
             static_cast<size_t>(inner) * sizeof(float));
    }
}

void slice(const float* x, const std::vector<int64_t>& xd, const std::vector<int64_t>& start,
           const std::vector<int64_t>& step, float* y, const std::vector<int64_t>& yd) {
  const size_t r = xd.size();
  std::vector<int64_t> xs(r, 1);
  for (size_t k = r - 1; k-- > 0;) xs[k] = xs[k + 1] * xd[k + 1];
  const int64_t inner = yd[r - 1], rows = count(yd) / std::max<int64_t>(inner, 1);
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = 0, rest = row;
    for (size_t k = r - 1; k-- > 0;) {
      const int64_t i = rest % yd[k];
      rest /= yd[k];
      off += (start[k] + i * step[k]) * xs[k];
    }
    off += start[r - 1];
    float* out = y + row * inner;
    for (int64_t j = 0; j < inner; ++j) out[j] = x[off + j * step[r - 1]];
  }
}

void max_pool(const float* x, const std::vector<int64_t>& xd, const int64_t k[2],
              const int64_t s[2], const int64_t pl[2], float* y, const std::vector<int64_t>& yd) {
  const int64_t planes = xd[0] * xd[1], h = xd[2], w = xd[3], oh = yd[2], ow = yd[3];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i) {
      const float* in = x + p * h * w;
      float* out = y + (p * oh + i) * ow;
      const int64_t r0 = std::max<int64_t>(0, i * s[0] - pl[0]);
      const int64_t r1 = std::min(h, i * s[0] - pl[0] + k[0]);
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t c0 = std::max<int64_t>(0, j * s[1] - pl[1]);
        const int64_t c1 = std::min(w, j * s[1] - pl[1] + k[1]);
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) m = std::max(m, in[r * w + c]);
        out[j] = m;
      }
    }
}

void erf(const float* x, int64_t n, float* y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}

}  // namespace pwe
