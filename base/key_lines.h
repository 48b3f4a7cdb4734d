// base/key_lines: the framing of parwidth's small text files (a calibration, a
// measured plan, the per-boot machine cache):
//   <header>\n
//   <key> <rest>\n      (any number; the meaning of each key is the caller's)
//   end\n
// Every line ends with a newline, so a file cut short anywhere is told apart from a
// whole one; nothing may follow "end".
#pragma once

#include <string>
#include <vector>

namespace pw {

struct KeyLine {
  std::string key, rest;
  int lineno = 0;  // 1 is the header
};

// The key lines of `text`; false with *why ("not a <what> (v1)", "truncated ...",
// "text after 'end'", "line N") when the framing is not whole.
bool key_lines_split(const std::string& text, const std::string& header, const std::string& what,
                     std::vector<KeyLine>* out, std::string* why);

// A whole string that is a finite decimal number within [lo, hi] (no blanks, no hex).
bool number_parse(const std::string& s, double lo, double hi, double* out);

}  // namespace pw
