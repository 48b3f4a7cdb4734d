// Recursive-descent JSON parser; recursion is bounded by kMaxDepth, input by its length.
#include "graph/json_value.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace pw::graph::json {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  bool value(Value* v, int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    ws();
    if (p_ >= t_.size()) return fail("unexpected end");
    char c = t_[p_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v->type = Value::kString;
      return string(&v->str);
    }
    if (lit("true")) return v->type = Value::kBool, v->b = true, true;
    if (lit("false")) return v->type = Value::kBool, v->b = false, true;
    if (lit("null")) return v->type = Value::kNull, true;
    return number(v);
  }
  bool finish() {
    ws();
    return p_ == t_.size() ? true : fail("trailing characters");
  }
  std::string error() const { return err_ + " at byte " + std::to_string(p_); }

 private:
  bool fail(const char* why) {
    if (err_.empty()) err_ = why;
    return false;
  }
  void ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' || t_[p_] == '\r' || t_[p_] == '\t'))
      ++p_;
  }
  bool lit(std::string_view w) {
    if (t_.substr(p_, w.size()) != w) return false;
    p_ += w.size();
    return true;
  }
  bool number(Value* v) {
    size_t start = p_;
    while (p_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[p_])) || t_[p_] == '-' ||
                              t_[p_] == '+' || t_[p_] == '.' || t_[p_] == 'e' || t_[p_] == 'E'))
      ++p_;
    if (p_ == start || p_ - start > 64) return fail("bad value");
    std::string s(t_.substr(start, p_ - start));
    char* end = nullptr;
    v->num = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return fail("bad number");
    v->type = Value::kNumber;
    return true;
  }
  bool string(std::string* out) {
    ++p_;  // opening quote
    while (p_ < t_.size()) {
      char c = t_[p_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (p_ >= t_.size()) break;
      char e = t_[p_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (t_.size() - p_ < 4) return fail("bad \\u escape");
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            char h = t_[p_++];
            cp <<= 4;
            if (h >= '0' && h <= '9')
              cp |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f')
              cp |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
              cp |= unsigned(h - 'A' + 10);
            else
              return fail("bad \\u escape");
          }
          // Names only need to round-trip as bytes; surrogate pairs are kept as two units.
          if (cp < 0x80) {
            out->push_back(char(cp));
          } else if (cp < 0x800) {
            out->push_back(char(0xC0 | (cp >> 6)));
            out->push_back(char(0x80 | (cp & 0x3F)));
          } else {
            out->push_back(char(0xE0 | (cp >> 12)));
            out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
            out->push_back(char(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default:
          return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }
  bool array(Value* v, int depth) {
    v->type = Value::kArray;
    ++p_;
    ws();
    if (p_ < t_.size() && t_[p_] == ']') return ++p_, true;
    for (;;) {
      v->arr.emplace_back();
      if (!value(&v->arr.back(), depth + 1)) return false;
      ws();
      if (p_ < t_.size() && t_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < t_.size() && t_[p_] == ']') return ++p_, true;
      return fail("expected , or ]");
    }
  }
  bool object(Value* v, int depth) {
    v->type = Value::kObject;
    ++p_;
    ws();
    if (p_ < t_.size() && t_[p_] == '}') return ++p_, true;
    for (;;) {
      ws();
      if (p_ >= t_.size() || t_[p_] != '"') return fail("expected a key");
      v->obj.emplace_back();
      if (!string(&v->obj.back().first)) return false;
      ws();
      if (p_ >= t_.size() || t_[p_] != ':') return fail("expected :");
      ++p_;
      if (!value(&v->obj.back().second, depth + 1)) return false;
      ws();
      if (p_ < t_.size() && t_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < t_.size() && t_[p_] == '}') return ++p_, true;
      return fail("expected , or }");
    }
  }

  std::string_view t_;
  size_t p_ = 0;
  std::string err_;
};

}  // namespace

bool parse(std::string_view text, Value* out, std::string* err) {
  Parser p(text);
  Value v;
  if (!p.value(&v, 0) || !p.finish()) {
    if (err) *err = p.error();
    return false;
  }
  *out = std::move(v);
  return true;
}

void quoted_append(std::string* o, std::string_view s) {
  o->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        *o += "\\\"";
        break;
      case '\\':
        *o += "\\\\";
        break;
      case '\n':
        *o += "\\n";
        break;
      case '\r':
        *o += "\\r";
        break;
      case '\t':
        *o += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *o += buf;
        } else {
          o->push_back(static_cast<char>(c));
        }
    }
  }
  o->push_back('"');
}

}  // namespace pw::graph::json
