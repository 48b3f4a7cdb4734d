// base/key_lines: see key_lines.h.
#include "base/key_lines.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace pw {

bool key_lines_split(const std::string& text, const std::string& header, const std::string& what,
                     std::vector<KeyLine>* out, std::string* why) {
  out->clear();
  bool ended = false;
  size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      *why = "truncated (no newline after the last line)";
      return false;
    }
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    if (ended) {
      *why = "text after 'end'";
      return false;
    }
    if (lineno == 1) {
      if (line != header) {
        *why = "not a " + what + " (v1)";
        return false;
      }
      continue;
    }
    if (line == "end") {
      ended = true;
      continue;
    }
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || sp == 0) {
      *why = "line " + std::to_string(lineno);
      return false;
    }
    out->push_back({line.substr(0, sp), line.substr(sp + 1), lineno});
  }
  if (!ended) {
    *why = "truncated (no 'end')";
    return false;
  }
  return true;
}

bool number_parse(const std::string& s, double lo, double hi, double* out) {
  if (s.empty() || s.size() > 40) return false;
  // Decimal only: strtod would also take leading blanks, hex and "infinity".
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  }
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

}  // namespace pw
