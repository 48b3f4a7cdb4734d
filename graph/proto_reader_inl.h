// Template part of proto_reader.h: packed/unpacked repeated integer and float fields.
#pragma once

#include <cstring>

namespace pw::graph::proto {

template <typename Sink>
bool int64s_read(const Field& f, Sink sink) {
  if (f.wire == kVarint) {
    sink(static_cast<int64_t>(f.varint));
    return true;
  }
  if (f.wire != kLen) return false;
  // A packed payload is a run of varints with no keys.
  const auto* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
  const auto* end = p + f.bytes.size();
  while (p < end) {
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
      if (p >= end || shift > 63) return false;
      uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
      shift += 7;
    }
    sink(static_cast<int64_t>(v));
  }
  return true;
}

template <typename Sink>
void floats_read(const Field& f, Sink sink) {
  if (f.wire == kFixed32) sink(fixed32_float(f));
  if (f.wire != kLen) return;
  for (size_t k = 0; k + 4 <= f.bytes.size(); k += 4) {
    float v;
    std::memcpy(&v, f.bytes.data() + k, 4);
    sink(v);
  }
}

}  // namespace pw::graph::proto
