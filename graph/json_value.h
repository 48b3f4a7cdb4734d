// A small JSON parser for the edge-list format: a DOM, a depth limit, no exceptions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pw::graph::json {

constexpr int kMaxDepth = 64;

struct Value {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Value> arr;
  std::vector<std::pair<std::string, Value>> obj;

  const Value* get(std::string_view key) const {
    for (const auto& kv : obj)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};

// Parses text into *out. On failure returns false and sets *err (with a byte offset).
bool parse(std::string_view text, Value* out, std::string* err);

// Appends s as a JSON string (quoted, escaped) to *o: the one escaper of the
// project (graph stats, the report, the CLI's --json).
void quoted_append(std::string* o, std::string_view s);

}  // namespace pw::graph::json
