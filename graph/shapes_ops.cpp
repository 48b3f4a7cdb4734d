// The helpers every shape rule shares (shapes_ops.h): tensor infos, axes, broadcasting.
#include <algorithm>

#include "graph/shapes_ops.h"

namespace pw::graph::shape {

const TI& Args::operator[](size_t k) const {
  static const TI kNone;
  return k < in.size() ? in[k] : kNone;
}

TI unknown(DType t) {
  TI r;
  r.dtype = t;
  return r;
}

TI of_dims(std::vector<int64_t> dims, DType t) {
  TI r;
  if (dims.size() > size_t(kMaxRank)) return unknown(t);
  for (int64_t& d : dims)
    if (!dim_ok(d)) d = -1;
  r.rank = static_cast<int>(dims.size());
  r.dims = std::move(dims);
  r.dtype = t;
  return r;
}

TI of_rank(int rank, DType t) {
  if (rank < 0 || rank > kMaxRank) return unknown(t);
  return of_dims(std::vector<int64_t>(size_t(rank), -1), t);
}

TI scalar_values(std::vector<int64_t> v, std::vector<int64_t> dims, DType t) {
  TI r = of_dims(std::move(dims), t);
  if (r.elements() == int64_t(v.size()) && v.size() <= kMaxFoldedElements) {
    r.values = std::move(v);
    r.has_values = true;
  }
  return r;
}

int64_t axis_norm(int64_t axis, int rank) {
  if (rank < 0) return -1;
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

bool dim_ok(int64_t d) {
  return d >= 0 && d <= kMaxDim;
}

TI broadcast(const TI& a, const TI& b) {
  DType t = a.dtype != DType::kUnknown ? a.dtype : b.dtype;
  if (a.rank < 0 || b.rank < 0) return unknown(t);
  const int r = std::max(a.rank, b.rank);
  std::vector<int64_t> d(size_t(r), -1);
  for (int i = 0; i < r; ++i) {
    const int ia = a.rank - r + i, ib = b.rank - r + i;
    const int64_t x = ia >= 0 ? a.dims[size_t(ia)] : 1;
    const int64_t y = ib >= 0 ? b.dims[size_t(ib)] : 1;
    if (x == 1)
      d[size_t(i)] = y;
    else if (y == 1)
      d[size_t(i)] = x;
    else if (x == y)
      d[size_t(i)] = x;
    else
      d[size_t(i)] = -1;  // one unknown (or a mismatch): not guessed
  }
  return of_dims(std::move(d), t);
}

bool values_of(const TI& t, std::vector<int64_t>* v) {
  if (!t.has_values || t.rank > 1) return false;
  *v = t.values;
  return true;
}

}  // namespace pw::graph::shape
