// cli/args: a small option scanner shared by the subcommands.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace pw::cli {

// Walks argv[1..]; for "--name VALUE" and "--name=VALUE" forms.
class Args {
 public:
  Args(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool done() const { return i_ >= argc_; }
  const char* peek() const { return argv_[i_]; }
  int index() const { return i_; }
  // True if the current argument is the flag `name`; consumes it.
  bool flag(const char* name) {
    if (done() || strcmp(argv_[i_], name) != 0) return false;
    ++i_;
    return true;
  }
  // True if the current argument is `name` with a value; stores it, consumes both.
  // A missing value sets *missing.
  bool value(const char* name, std::string* out, bool* missing) {
    if (done()) return false;
    const char* a = argv_[i_];
    const size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return false;
    if (a[n] == '=') {
      *out = a + n + 1;
      ++i_;
      return true;
    }
    if (a[n] != '\0') return false;
    if (i_ + 1 >= argc_) {
      *missing = true;
      ++i_;
      return true;
    }
    *out = argv_[i_ + 1];
    i_ += 2;
    return true;
  }

 private:
  int argc_;
  char** argv_;
  int i_ = 1;
};

inline bool parse_count(const std::string& s, int lo, int hi, int* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace pw::cli
