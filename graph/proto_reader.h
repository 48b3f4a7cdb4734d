// A protobuf wire-format reader of our own: the preload must not bring a second libprotobuf
// into processes that already carry TensorFlow's or PyTorch's.
//
// It walks one message's fields; nested messages are read by constructing a reader over a
// length-delimited payload with depth + 1. Every length is checked against the bytes that
// remain, varints are at most 10 bytes, groups (wire types 3/4) are rejected, and nesting
// deeper than kMaxDepth is an error, so hostile input cannot overrun or exhaust the stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pw::graph::proto {

constexpr int kMaxDepth = 64;

enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType wire = kVarint;
  uint64_t varint = 0;     // kVarint, kFixed64, kFixed32 values
  std::string_view bytes;  // kLen payload
};

class Reader {
 public:
  Reader(std::string_view data, int depth) : data_(data), depth_(depth) {}

  // Next field into *f. False at the end of the message or on an error (check ok()).
  bool next(Field* f);
  bool ok() const { return error_ == nullptr && depth_ <= kMaxDepth; }
  const char* error() const { return depth_ > kMaxDepth ? "messages nested too deeply" : error_; }
  int depth() const { return depth_; }

 private:
  bool varint_read(uint64_t* v);
  bool fail(const char* why) {
    error_ = why;
    return false;
  }

  std::string_view data_;
  size_t pos_ = 0;
  int depth_;
  const char* error_ = nullptr;
};

// Reads the elements of a repeated int64 field that may be packed (kLen) or not (kVarint).
// Calls sink(value) per element; false on malformed packed payloads.
template <typename Sink>
bool int64s_read(const Field& f, Sink sink);

// A fixed32 field's bits as a float (IEEE 754 single, as protobuf stores floats).
float fixed32_float(const Field& f);

// Reads the elements of a repeated float field, packed (kLen: 4 bytes each, a partial
// last one ignored) or not (kFixed32); calls sink(value) per element.
template <typename Sink>
void floats_read(const Field& f, Sink sink);

// The same as int64s_read, appended to *out while it holds fewer than `cap` values (past that,
// *over is set): a tensor's integer data, kept only when small. int32: the field holds 32-bit
// values, sign-extended from their low 32 bits.
bool ints_append(const Field& f, bool int32, size_t cap, std::vector<int64_t>* out, bool* over);

}  // namespace pw::graph::proto

#include "graph/proto_reader_inl.h"
