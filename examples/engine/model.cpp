// examples/engine/model: ONNX / JSON -> pwe::Model. The format's reader (model_onnx.cpp,
// model_json.cpp) gives the ops and constants; this orders the ops, drops unread inputs,
// infers the shapes (model_shapes.cpp) and seeds what the model lacks (weights, inputs).
#include "examples/engine/model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "examples/engine/model_load.h"

namespace pwe {
namespace {

// splitmix64: a seeded stream per tensor name, independent of load order.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed, const std::string& name) : s(seed * 0x9E3779B97F4A7C15ull) {
    for (unsigned char c : name) s = (s ^ c) * 0x100000001B3ull;
  }
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>((next() >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f; }
};

}  // namespace

namespace load {

bool fail(std::string* err, const std::string& why) {
  if (err) *err = why;
  return false;
}

void fill(Tensor* t, const std::string& name, uint64_t seed) {
  const int64_t n = numel(t->dims);
  t->data.resize(static_cast<size_t>(n));
  Rng r(seed, name);
  int64_t fan_in = 1;
  for (size_t i = 1; i < t->dims.size(); ++i) fan_in *= t->dims[i];
  const float scale = t->dims.size() >= 2 ? std::sqrt(6.f / static_cast<float>(fan_in)) : 0.1f;
  for (auto& v : t->data) v = r.uniform() * scale;
  t->seeded = true;
}

void apply_sizes(Model* m, const LoadOptions& o) {
  for (Input& in : m->inputs) {
    if (o.batch > 0 && !in.dims.empty()) in.dims[0] = o.batch;
    if (o.image_size > 0 && in.dims.size() == 4) in.dims[2] = in.dims[3] = o.image_size;
  }
}

}  // namespace load

namespace {

using load::fail;

// Kahn's order over producers; rejects cycles and multi-output ops.
bool order(Model* m, std::string* err) {
  std::unordered_map<std::string, int> producer;
  for (size_t i = 0; i < m->ops.size(); ++i) {
    if (m->ops[i].outputs.size() != 1)
      return fail(err, "op " + m->ops[i].name + ": only single-output ops are supported");
    producer[m->ops[i].outputs[0]] = static_cast<int>(i);
  }
  const size_t n = m->ops.size();
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& in : m->ops[i].inputs) {
      auto it = producer.find(in);
      if (it == producer.end()) continue;
      succ[it->second].push_back(static_cast<int>(i));
      ++indeg[i];
    }
  }
  std::vector<int> q;
  for (size_t i = 0; i < n; ++i)
    if (!indeg[i]) q.push_back(static_cast<int>(i));
  for (size_t h = 0; h < q.size(); ++h)
    for (int s : succ[q[h]])
      if (--indeg[s] == 0) q.push_back(s);
  if (q.size() != n) return fail(err, "the graph has a cycle");
  std::vector<Op> ops;
  ops.reserve(q.size());
  std::vector<int> pos(n);
  for (size_t k = 0; k < n; ++k) pos[q[k]] = static_cast<int>(k);
  for (int i : q) ops.push_back(std::move(m->ops[i]));
  for (Op& op : ops) {
    op.preds.clear();
    for (const std::string& in : op.inputs) {
      auto it = producer.find(in);
      if (it != producer.end()) op.preds.push_back(pos[it->second]);
    }
    std::sort(op.preds.begin(), op.preds.end());
    op.preds.erase(std::unique(op.preds.begin(), op.preds.end()), op.preds.end());
  }
  m->ops = std::move(ops);
  return true;
}

}  // namespace

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

int Model::tensor(const std::string& n) const {
  for (size_t i = 0; i < tensor_names.size(); ++i)
    if (tensor_names[i] == n) return static_cast<int>(i);
  return -1;
}

const Tensor* Model::constant(const std::string& n) const {
  for (size_t i = 0; i < const_names.size(); ++i)
    if (const_names[i] == n) return &consts[i];
  return nullptr;
}

bool model_load_bytes(const void* data, size_t size, const LoadOptions& o, Model* m,
                      std::string* err) {
  try {
    std::string_view bytes(static_cast<const char*>(data), size);
    size_t k = 0;
    while (k < size && isspace(static_cast<unsigned char>(bytes[k]))) ++k;
    std::map<std::string, load::JsonWeights> jw;
    const bool is_json = k < size && bytes[k] == '{';
    if (!(is_json ? load::json_read(bytes, o, m, &jw, err) : load::onnx_read(bytes, o, m, err)))
      return false;
    // Inputs nothing reads (ONNX lists initializers as inputs in old exports) are dropped.
    std::vector<Input> used;
    for (Input& in : m->inputs) {
      bool read = false;
      for (const Op& op : m->ops)
        for (const std::string& s : op.inputs) read |= s == in.name;
      if (read && !m->constant(in.name)) used.push_back(std::move(in));
    }
    m->inputs = std::move(used);
    load::apply_sizes(m, o);
    for (const Input& in : m->inputs) {
      if (in.dims.empty()) return fail(err, "input " + in.name + " has no shape");
      m->tensor_names.push_back(in.name);
      m->tensor_dims.push_back(in.dims);
    }
    if (!order(m, err) || !load::infer(m, jw, o.seed, err)) return false;
    if (m->outputs.empty()) {  // JSON default: what no op reads
      for (const Op& op : m->ops) {
        bool read = false;
        for (const Op& other : m->ops)
          for (const std::string& s : other.inputs) read |= s == op.outputs[0];
        if (!read) m->outputs.push_back(op.outputs[0]);
      }
    }
    for (const std::string& out : m->outputs)
      if (m->tensor(out) < 0) return fail(err, "output " + out + " is produced by no op");
    if (m->ops.empty()) return fail(err, "the graph has no operators");
    return true;
  } catch (const std::exception& e) {
    return fail(err, std::string("model: ") + e.what());
  }
}

std::vector<Tensor> model_make_inputs(const Model& m, uint64_t seed) {
  std::vector<Tensor> out;
  for (const Input& in : m.inputs) {
    Tensor t;
    t.dims = in.dims;
    t.data.resize(static_cast<size_t>(numel(in.dims)));
    Rng r(seed + 7, "input:" + in.name);
    for (float& v : t.data)
      v = in.index_range > 0 ? static_cast<float>(r.next() % static_cast<uint64_t>(in.index_range))
                             : r.uniform();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace pwe
