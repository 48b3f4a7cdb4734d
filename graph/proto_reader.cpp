// Protobuf wire-format field iteration with bounds checks (see proto_reader.h).
#include "graph/proto_reader.h"

#include <cstring>

namespace pw::graph::proto {

bool Reader::varint_read(uint64_t* v) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos_ >= data_.size()) return fail("truncated varint");
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    result |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
    if (!(b & 0x80)) {
      *v = result;
      return true;
    }
  }
  return fail("varint longer than 10 bytes");
}

bool Reader::next(Field* f) {
  if (!ok() || pos_ >= data_.size()) return false;
  uint64_t key = 0;
  if (!varint_read(&key)) return false;
  uint64_t number = key >> 3;
  if (number == 0 || number > 0x1FFFFFFF) return fail("bad field number");
  f->number = static_cast<uint32_t>(number);
  f->wire = static_cast<WireType>(key & 7);
  f->varint = 0;
  f->bytes = {};
  switch (key & 7) {
    case kVarint:
      return varint_read(&f->varint);
    case kFixed64:
    case kFixed32: {
      size_t n = (key & 7) == kFixed64 ? 8 : 4;
      if (data_.size() - pos_ < n) return fail("truncated fixed-width field");
      uint64_t v = 0;
      for (size_t i = 0; i < n; ++i)
        v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
      pos_ += n;
      f->varint = v;
      return true;
    }
    case kLen: {
      uint64_t n = 0;
      if (!varint_read(&n)) return false;
      if (n > data_.size() - pos_) return fail("length past the end of the message");
      f->bytes = data_.substr(pos_, static_cast<size_t>(n));
      pos_ += static_cast<size_t>(n);
      return true;
    }
    default:
      return fail("unsupported wire type (group or invalid)");
  }
}

float fixed32_float(const Field& f) {
  const uint32_t u = static_cast<uint32_t>(f.varint);
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

bool ints_append(const Field& f, bool int32, size_t cap, std::vector<int64_t>* out, bool* over) {
  return int64s_read(f, [&](int64_t v) {
    if (out->size() >= cap) {
      *over = true;
      return;
    }
    out->push_back(int32 ? int64_t(int32_t(v)) : v);
  });
}

}  // namespace pw::graph::proto
