// Linux cpu lists ("0-3,8,10-11"), the format of sysfs, cgroup files and PARWIDTH_CPUS.
#include <algorithm>
#include <new>

#include "topology/internal.h"

namespace pw::topo {

namespace {

// No machine has a million CPUs; a larger index is a typo or garbage, not a request.
constexpr long kMaxCpu = 1L << 20;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Parses a non-negative decimal at text[*i], leaving *i after it.
bool number_parse(const std::string& text, size_t* i, long* out) {
  size_t start = *i;
  long v = 0;
  while (*i < text.size() && is_digit(text[*i])) {
    v = v * 10 + (text[*i] - '0');
    if (v > kMaxCpu) return false;
    ++*i;
  }
  *out = v;
  return *i > start;
}

void skip_space(const std::string& text, size_t* i) {
  while (*i < text.size() && is_space(text[*i])) ++*i;
}

}  // namespace

Status cpulist_parse(const std::string& text, std::vector<int>* out, std::string* err) {
  try {
    // Ranges first, merged, then expanded: a long value of overlapping
    // ranges ("0-1048576,0-1048576,...") costs its unique CPUs, at most
    // kMaxCpu + 1, not the sum of its ranges.
    std::vector<std::pair<long, long>> ranges;
    size_t i = 0;
    skip_space(text, &i);
    if (i == text.size()) {
      out->clear();
      return Status::kOk;
    }
    for (;;) {
      long lo = 0, hi = 0;
      skip_space(text, &i);
      if (!number_parse(text, &i, &lo)) break;
      hi = lo;
      skip_space(text, &i);
      if (i < text.size() && text[i] == '-') {
        ++i;
        skip_space(text, &i);
        if (!number_parse(text, &i, &hi)) break;
        if (hi < lo) {
          internal::err_set(err, "cpu list \"" + internal::one_line(text) + "\": reversed range");
          return Status::kInvalid;
        }
        skip_space(text, &i);
      }
      ranges.emplace_back(lo, hi);
      if (i == text.size()) {
        std::sort(ranges.begin(), ranges.end());
        std::vector<int> cpus;
        long next = 0;  // the first CPU not yet listed
        for (const auto& [a, b] : ranges) {
          for (long c = std::max(a, next); c <= b; ++c) cpus.push_back(static_cast<int>(c));
          next = std::max(next, b + 1);
        }
        *out = std::move(cpus);
        return Status::kOk;
      }
      if (text[i] != ',') break;
      ++i;
    }
    internal::err_set(err, "cpu list \"" + internal::one_line(text) +
                               "\": not a list of cpu numbers and ranges (0 to " +
                               std::to_string(kMaxCpu) + ")");
    return Status::kInvalid;
  } catch (const std::bad_alloc&) {
    internal::err_set(err, "cpu list: out of memory");
    return Status::kIoError;
  }
}

std::string cpulist_format(const std::vector<int>& cpus) {
  std::string s;
  try {
    std::vector<int> v(cpus);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (!s.empty()) s += ',';
      s += std::to_string(v[i]);
      if (j > i) s += '-' + std::to_string(v[j]);
      i = j + 1;
    }
  } catch (const std::bad_alloc&) {
    s.clear();
  }
  return s;
}

}  // namespace pw::topo
