// cli/args: the option table's scanner (see args.h).
#include "cli/args.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "graph/graph.h"

namespace pw::cli {

Option flag(const char* name, bool* out) {
  return {name, "", [out](const std::string&, std::string*) { return *out = true; }};
}

Option text(const char* name, std::string* out) {
  return {name, "a value", [out](const std::string& v, std::string*) {
            *out = v;
            return true;
          }};
}

Option count(const char* name, int lo, int hi, int* out) {
  const std::string wants = hi >= 100000
                                ? "an integer >= " + std::to_string(lo)
                                : "an integer " + std::to_string(lo) + ".." + std::to_string(hi);
  return {name, wants,
          [=](const std::string& v, std::string*) { return count_parse(v, lo, hi, out); }};
}

Option seconds(const char* name, double max_s, double* out) {
  return {name, "seconds > 0", [=](const std::string& v, std::string*) {
            char* end = nullptr;
            const double s = strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(s > 0) || s > max_s) return false;
            *out = s;
            return true;
          }};
}

Option count_list(const char* name, std::vector<int>* out) {
  return {name, "a list like 1,2,4 or 1-4", [out](const std::string& text, std::string*) {
            std::vector<int> got;
            size_t pos = 0;
            while (pos <= text.size()) {
              size_t comma = text.find(',', pos);
              if (comma == std::string::npos) comma = text.size();
              const std::string part = text.substr(pos, comma - pos);
              pos = comma + 1;
              int lo = 0, hi = 0;
              const size_t dash = part.find('-');
              if (dash == std::string::npos) {
                if (!count_parse(part, 1, 4096, &lo)) return false;
                hi = lo;
              } else if (!count_parse(part.substr(0, dash), 1, 4096, &lo) ||
                         !count_parse(part.substr(dash + 1), 1, 4096, &hi) || hi < lo) {
                return false;
              }
              for (int v = lo; v <= hi; ++v) got.push_back(v);
            }
            std::sort(got.begin(), got.end());
            got.erase(std::unique(got.begin(), got.end()), got.end());
            *out = got;
            return !got.empty();
          }};
}

Option input_shapes(const char* name, std::string* joined) {
  return {name, "NAME=DxDx...", [joined](const std::string& v, std::string* why) {
            graph::InputShapes parsed;
            if (graph::input_shapes_parse(v, &parsed, why) != graph::Status::kOk) return false;
            *joined += (joined->empty() ? "" : ",") + v;
            return true;
          }};
}

int options_scan(const char* who, int argc, char** argv, const std::vector<Option>& opts, Ends ends,
                 void (*usage)(FILE*), int* rest, std::vector<std::string>* positionals) {
  auto error = [&](const std::string& what) {
    fprintf(stderr, "%s: error: %s (see %s --help)\n", who, what.c_str(), who);
    return 2;
  };
  int i = 1;
  for (; i < argc; ++i) {
    const char* arg = argv[i];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      usage(stdout);
      return 0;
    }
    if (ends != Ends::kNoRest && !strcmp(arg, "--")) {
      ++i;
      break;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      if (ends == Ends::kAtCommand) break;
      if (positionals && ends == Ends::kNoRest) {
        positionals->emplace_back(arg);
        continue;
      }
      return error("unexpected argument '" + std::string(arg) + "'");
    }
    const char* eq = strchr(arg, '=');
    const std::string name = eq ? std::string(arg, static_cast<size_t>(eq - arg)) : arg;
    const Option* o = nullptr;
    for (const Option& c : opts)
      if (c.name == name) o = &c;
    if (!o) return error("unknown option '" + std::string(arg) + "'");
    std::string value;
    if (o->wants.empty()) {
      if (eq) return error(name + " takes no value");
    } else if (eq) {
      value = eq + 1;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return error(name + " wants " + o->wants);
    }
    std::string why;
    if (!o->take(value, &why))
      return error(why.empty() ? name + " wants " + o->wants + ", got '" + value + "'"
                               : name + ": " + why);
  }
  if (rest) *rest = i;
  return -1;
}

}  // namespace pw::cli
