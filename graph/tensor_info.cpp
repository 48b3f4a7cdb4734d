// Small value types of the public API: element types, TensorInfo, attribute look-up, and
// the "name=1x3x224x224,..." input-shape syntax shared by the CLI and the preload.
#include <cstdlib>

#include "graph/graph.h"

namespace pw::graph {

int dtype_size(DType t) {
  switch (t) {
    case DType::kUint8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kUint16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBfloat16:
      return 2;
    case DType::kInt64:
    case DType::kDouble:
    case DType::kUint64:
    case DType::kString:
      return 8;
    default:
      return 4;
  }
}

bool TensorInfo::known() const {
  if (rank < 0 || dims.size() != static_cast<size_t>(rank)) return false;
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

int64_t TensorInfo::elements() const {
  if (!known()) return -1;
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d == 0) return 0;
    p = p > kCap / d ? kCap : p * d;
  }
  return p;
}

const Attr* Node::attr(const std::string& n) const {
  for (const Attr& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

int64_t Node::attr_int(const std::string& n, int64_t dflt) const {
  const Attr* a = attr(n);
  return a && a->kind == Attr::Kind::kInt ? a->i : dflt;
}

double Node::attr_float(const std::string& n, double dflt) const {
  const Attr* a = attr(n);
  if (!a) return dflt;
  if (a->kind == Attr::Kind::kFloat) return a->f;
  return a->kind == Attr::Kind::kInt ? static_cast<double>(a->i) : dflt;
}

std::string Node::attr_string(const std::string& n, const std::string& dflt) const {
  const Attr* a = attr(n);
  return a && a->kind == Attr::Kind::kString ? a->s : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& n) const {
  const Attr* a = attr(n);
  return a && a->kind == Attr::Kind::kInts ? a->ints : std::vector<int64_t>{};
}

InputShapes input_shapes_resized(const Graph& g, int64_t batch, int64_t hw) {
  InputShapes out;
  if (batch <= 0 && hw <= 0) return out;
  for (const std::string& name : g.inputs) {
    auto it = g.tensors.find(name);
    if (it == g.tensors.end() || it->second.rank < 0 ||
        it->second.dims.size() != static_cast<size_t>(it->second.rank))
      continue;
    std::vector<int64_t> dims = it->second.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    if (batch > 0 && !dims.empty()) dims[0] = batch;
    if (hw > 0 && dims.size() == 4) dims[2] = dims[3] = hw;
    out[name] = std::move(dims);
  }
  return out;
}

Status input_shapes_parse(const std::string& text, InputShapes* out, std::string* err) {
  InputShapes r;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(",;", pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      if (err) *err = "input shape '" + item + "': want NAME=DxDx..., e.g. x=1x3x224x224";
      return Status::kBadFormat;
    }
    std::vector<int64_t> dims;
    const std::string spec = item.substr(eq + 1);
    size_t p = 0;
    while (p < spec.size()) {
      size_t x = spec.find_first_of("xX*", p);
      if (x == std::string::npos) x = spec.size();
      const std::string d = spec.substr(p, x - p);
      char* e = nullptr;
      const long long v = d.empty() ? -1 : std::strtoll(d.c_str(), &e, 10);
      if (d.empty() || !e || *e != '\0' || v < 0 || v > (int64_t{1} << 40) || dims.size() >= 64) {
        if (err) *err = "input shape '" + item + "': bad dimension '" + d + "'";
        return Status::kBadFormat;
      }
      dims.push_back(v);
      p = x + 1;
      if (x + 1 == spec.size()) {  // a trailing 'x'
        if (err) *err = "input shape '" + item + "': bad dimension ''";
        return Status::kBadFormat;
      }
    }
    r[item.substr(0, eq)] = std::move(dims);
  }
  *out = std::move(r);
  return Status::kOk;
}

}  // namespace pw::graph
