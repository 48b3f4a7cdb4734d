// core/json: the writer.
#include "core/json.h"

#include <cmath>
#include <cstdio>

#include "graph/json_value.h"

namespace pw::json {

std::string quote(const std::string& s) {
  std::string o;
  graph::json::quoted_append(&o, s);
  return o;
}

void Writer::sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
  }
}

Writer& Writer::begin_object() {
  sep();
  out_ += "{";
  first_.push_back(true);
  return *this;
}
Writer& Writer::end_object() {
  out_ += "}";
  first_.pop_back();
  return *this;
}
Writer& Writer::begin_array() {
  sep();
  out_ += "[";
  first_.push_back(true);
  return *this;
}
Writer& Writer::end_array() {
  out_ += "]";
  first_.pop_back();
  return *this;
}
Writer& Writer::key(const std::string& k) {
  sep();
  out_ += quote(k) + ":";
  after_key_ = true;
  return *this;
}
Writer& Writer::value(const std::string& s) {
  sep();
  out_ += quote(s);
  return *this;
}
Writer& Writer::value(const char* s) {
  return s ? value(std::string(s)) : null();
}
Writer& Writer::value(long long v) {
  sep();
  out_ += std::to_string(v);
  return *this;
}
Writer& Writer::value(double v) {
  sep();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char b[32];
  snprintf(b, sizeof b, "%.6g", v);
  out_ += b;
  return *this;
}
Writer& Writer::value(bool b) {
  sep();
  out_ += b ? "true" : "false";
  return *this;
}
Writer& Writer::null() {
  sep();
  out_ += "null";
  return *this;
}
Writer& Writer::raw(const std::string& j) {
  sep();
  out_ += j;
  return *this;
}
Writer& Writer::ints(const std::vector<int>& v) {
  begin_array();
  for (int x : v) value(x);
  return end_array();
}
Writer& Writer::strings(const std::vector<std::string>& v) {
  begin_array();
  for (const std::string& s : v) value(s);
  return end_array();
}

}  // namespace pw::json
