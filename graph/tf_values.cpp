// Reading TensorFlow's protobuf values (tf_values.h).
#include "graph/tf_values.h"

namespace pw::graph::tf_values {
namespace {

using proto::Field;

constexpr size_t kMaxAttrList = 65536;  // list attributes' entries kept at most

}  // namespace

// TF DataType -> DType (ONNX numbering): FLOAT 1, DOUBLE 2, INT32 3, UINT8 4, INT16 5,
// INT8 6, STRING 7, INT64 9, BOOL 10, BFLOAT16 14, UINT16 17, HALF 19, UINT32 22, UINT64 23.
// Reference types (+100) map like their base type.
DType tf_dtype(int64_t t) {
  if (t > 100) t -= 100;
  switch (t) {
    case 1:
      return DType::kFloat;
    case 2:
      return DType::kDouble;
    case 3:
      return DType::kInt32;
    case 4:
      return DType::kUint8;
    case 5:
      return DType::kInt16;
    case 6:
      return DType::kInt8;
    case 7:
      return DType::kString;
    case 9:
      return DType::kInt64;
    case 10:
      return DType::kBool;
    case 14:
      return DType::kBfloat16;
    case 17:
      return DType::kUint16;
    case 19:
      return DType::kFloat16;
    case 22:
      return DType::kUint32;
    case 23:
      return DType::kUint64;
    default:
      return DType::kUnknown;
  }
}

// TensorShapeProto (dim 2 {size 1}, unknown_rank 3) -> dims (-1 unknown); false: rank unknown.
bool tf_shape(std::string_view bytes, int depth, std::vector<int64_t>* dims, Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  bool unknown_rank = false;
  while (r.next(&f)) {
    if (f.number == 3 && f.wire == proto::kVarint && f.varint) unknown_rank = true;
    if (f.number != 2 || f.wire != proto::kLen) continue;
    int64_t v = 0;  // proto3: a dim without `size` has size 0 (an empty tensor); -1 is written
    Reader d(f.bytes, depth + 1);
    Field df;
    while (d.next(&df))
      if (df.number == 1 && df.wire == proto::kVarint) v = static_cast<int64_t>(df.varint);
    if (!c->check(d, "shape dim")) return false;
    if (dims->size() >= 1024) return c->bad("a shape of rank over 1024");
    dims->push_back(v < 0 ? -1 : v);
  }
  c->check(r, "shape");
  return !unknown_rank;
}

// TensorProto (dtype 1, tensor_shape 2, tensor_content 4, int_val 7, int64_val 10,
// bool_val 11) -> TensorInfo with small integer values.
bool tf_tensor(std::string_view bytes, int depth, TensorInfo* t, Ctx* c) {
  Reader r(bytes, depth);
  Field f;
  std::vector<int64_t> ints;
  std::string_view content;
  bool too_many = false;
  while (r.next(&f)) {
    if (f.number == 1 && f.wire == proto::kVarint) t->dtype = tf_dtype(int64_t(f.varint));
    if (f.number == 2 && f.wire == proto::kLen) {
      t->dims.clear();
      if (!tf_shape(f.bytes, depth + 1, &t->dims, c) && c->status != Status::kOk) return false;
    }
    if (f.number == 4 && f.wire == proto::kLen) content = f.bytes;
    if ((f.number == 7 || f.number == 10 || f.number == 11) &&
        !proto::ints_append(f, f.number == 7, kMaxFoldedElements, &ints, &too_many))
      return c->bad("malformed tensor values");
  }
  if (!c->check(r, "tensor")) return false;
  t->rank = static_cast<int>(t->dims.size());
  t->constant = true;
  const int64_t n = t->elements();
  const bool integral =
      t->dtype == DType::kInt32 || t->dtype == DType::kInt64 || t->dtype == DType::kBool;
  if (!integral || n < 0 || n > int64_t(kMaxFoldedElements) || too_many) return true;
  const size_t w = static_cast<size_t>(dtype_size(t->dtype));
  if (!content.empty()) {
    if (content.size() != size_t(n) * w) return true;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      for (size_t b = 0; b < w; ++b)
        v |= uint64_t(static_cast<uint8_t>(content[size_t(i) * w + b])) << (8 * b);
      t->values.push_back(w == 4 ? int64_t(int32_t(uint32_t(v))) : static_cast<int64_t>(v));
    }
    t->has_values = true;
  } else if (ints.size() == size_t(n)) {
    t->values = std::move(ints);
    t->has_values = true;
  } else if (!ints.empty() && ints.size() < size_t(n)) {  // TF repeats the last value
    t->values = ints;
    t->values.resize(size_t(n), ints.back());
    t->has_values = true;
  } else if (ints.empty()) {  // no values at all: zeros, as TF reads it
    t->values.assign(size_t(n), 0);
    t->has_values = true;
  }
  return true;
}

// AttrValue (list 1 {s 2, i 3, f 4, b 5, type 6, shape 7}, s 2, i 3, f 4, b 5, type 6,
// shape 7, tensor 8) -> Attr.
bool tf_attr(std::string_view bytes, int depth, Attr* a, Ctx* c) {
  using K = Attr::Kind;
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    switch (f.number) {
      case 1: {
        if (f.wire != proto::kLen) break;
        Reader l(f.bytes, depth + 1);
        Field lf;
        a->kind = K::kInts;  // an empty list reads as an empty int list
        while (l.next(&lf)) {
          if (lf.number == 2 && lf.wire == proto::kLen && a->strings.size() < kMaxAttrList) {
            a->strings.emplace_back(lf.bytes);
            a->kind = K::kStrings;
          } else if (lf.number == 3 || lf.number == 5 || lf.number == 6) {
            const bool types = lf.number == 6;
            if (!proto::int64s_read(lf, [&](int64_t v) {
                  if (a->ints.size() < kMaxAttrList)
                    a->ints.push_back(types ? static_cast<int64_t>(tf_dtype(v)) : v);
                }))
              return c->bad("malformed attr list");
          } else if (lf.number == 4) {
            a->kind = K::kFloats;
            proto::floats_read(lf, [&](float v) {
              if (a->floats.size() < kMaxAttrList) a->floats.push_back(v);
            });
          } else if (lf.number == 7 && lf.wire == proto::kLen) {
            TensorInfo t;
            const bool known = tf_shape(lf.bytes, depth + 2, &t.dims, c);
            if (c->status != Status::kOk) return false;
            a->kind = K::kShapes;
            if (known)
              t.rank = static_cast<int>(t.dims.size());
            else
              t.dims.clear();
            if (a->shapes.size() < 1024) a->shapes.push_back(std::move(t));
          }
        }
        if (!c->check(l, "attr list")) return false;
        break;
      }
      case 2:
        if (f.wire == proto::kLen) a->s.assign(f.bytes), a->kind = K::kString;
        break;
      case 3:
      case 5:
        if (f.wire == proto::kVarint) a->i = static_cast<int64_t>(f.varint), a->kind = K::kInt;
        break;
      case 6:  // a type: kept as a DType
        if (f.wire == proto::kVarint)
          a->i = static_cast<int64_t>(tf_dtype(int64_t(f.varint))), a->kind = K::kInt;
        break;
      case 4:
        if (f.wire == proto::kFixed32) a->f = proto::fixed32_float(f), a->kind = K::kFloat;
        break;
      case 7:
        if (f.wire == proto::kLen) {
          a->ints.clear();
          if (!tf_shape(f.bytes, depth + 1, &a->ints, c)) {
            if (c->status != Status::kOk) return false;
            a->kind = K::kOther;  // unknown rank
          } else {
            a->kind = K::kInts;
          }
        }
        break;
      case 8:
        if (f.wire == proto::kLen) {
          if (!tf_tensor(f.bytes, depth + 1, &a->tensor, c)) return false;
          a->kind = K::kTensor;
        }
        break;
      default:
        break;
    }
  }
  return c->check(r, "attr value");
}

}  // namespace pw::graph::tf_values
