// core/json: a small JSON writer for the report and the CLI's --json output.
#pragma once

#include <string>
#include <vector>

namespace pw::json {

// Appends to a string; the caller keeps keys and values balanced.
class Writer {
 public:
  Writer& begin_object();
  Writer& end_object();
  Writer& begin_array();
  Writer& end_array();
  Writer& key(const std::string& k);
  Writer& value(const std::string& s);
  Writer& value(const char* s);
  Writer& value(long long v);
  Writer& value(int v) { return value(static_cast<long long>(v)); }
  Writer& value(long v) { return value(static_cast<long long>(v)); }
  Writer& value(unsigned v) { return value(static_cast<long long>(v)); }
  Writer& value(double v);
  Writer& value(bool b);
  Writer& null();
  // The value where it is known, else null.
  template <typename T>
  Writer& value_or_null(bool known, const T& v) {
    return known ? value(v) : null();
  }
  Writer& raw(const std::string& json);  // an already-serialised value
  Writer& ints(const std::vector<int>& v);
  Writer& strings(const std::vector<std::string>& v);
  const std::string& str() const { return out_; }

 private:
  void sep();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

std::string quote(const std::string& s);

}  // namespace pw::json
