// Graphs built by hand for the shape-inference tests: attributes, a Builder that links
// nodes the way the readers do (ONNX by tensor name, TF by node name), TF constants.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace pw::graph::test {

using Dims = std::vector<int64_t>;

inline Attr ai(const std::string& n, int64_t v) {
  Attr a;
  a.name = n, a.kind = Attr::Kind::kInt, a.i = v;
  return a;
}
inline Attr ais(const std::string& n, Dims v) {
  Attr a;
  a.name = n, a.kind = Attr::Kind::kInts, a.ints = std::move(v);
  return a;
}
inline Attr as(const std::string& n, const std::string& v) {
  Attr a;
  a.name = n, a.kind = Attr::Kind::kString, a.s = v;
  return a;
}

// Builds a graph the way the readers do: inputs, constants, nodes linked by tensor name
// (ONNX) or by node name (TF).
struct Builder {
  Graph g;
  explicit Builder(Format f = Format::kOnnx) {
    g.format = f;
    g.name = "t";
  }
  void input(const std::string& n, Dims d, DType t = DType::kFloat) {
    g.inputs.push_back(n);
    TensorInfo ti;
    ti.rank = int(d.size()), ti.dims = std::move(d), ti.dtype = t;
    g.tensors[n] = ti;
  }
  void weight(const std::string& n, Dims d, Dims values = {}, DType t = DType::kFloat) {
    TensorInfo ti;
    ti.rank = int(d.size()), ti.dims = std::move(d), ti.dtype = t, ti.constant = true;
    if (!values.empty() || ti.elements() == 0) ti.values = values, ti.has_values = true;
    g.tensors[n] = ti;
  }
  void ints(const std::string& n, Dims v) {  // a 1-D int64 initializer
    weight(n, {int64_t(v.size())}, v, DType::kInt64);
  }
  Node& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
             std::vector<Attr> attrs = {}) {
    Node n;
    n.name = op + std::to_string(g.nodes.size());
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(attrs);
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  // TF: outputs are the node's name.
  Node& tf(const std::string& name, const std::string& op, std::vector<std::string> in,
           std::vector<Attr> attrs = {}) {
    Node& n = node(op, std::move(in), {}, std::move(attrs));
    n.name = name;
    return n;
  }
  void link() {
    for (Node& n : g.nodes) {
      n.preds.clear();
      for (const std::string& in : n.inputs) {
        std::string want = in;
        if (!want.empty() && want[0] == '^') want = want.substr(1);
        if (g.format != Format::kOnnx) want = want.substr(0, want.find(':'));
        for (size_t j = 0; j < g.nodes.size(); ++j) {
          const Node& p = g.nodes[j];
          const bool hit = g.format == Format::kOnnx ? std::find(p.outputs.begin(), p.outputs.end(),
                                                                 want) != p.outputs.end()
                                                     : p.name == want;
          if (hit) n.preds.push_back(uint32_t(j));
        }
      }
    }
  }
  std::vector<std::string> run(const InputShapes& given = {}) {
    link();
    std::vector<std::string> w;
    std::string err;
    EXPECT_EQ(shapes_infer(&g, given, &w, &err), Status::kOk) << err;
    return w;
  }
  const Node& at(size_t i) const { return g.nodes[i]; }
  const Node& last() const { return g.nodes.back(); }
  // TF: a Const of integer values with the given dims (a vector of them when dims is empty).
  Node& tf_ints(const std::string& name, Dims v, Dims d = {-1}, DType t = DType::kInt32) {
    Node& c = tf(name, "Const", {});
    Attr a;
    a.name = "value", a.kind = Attr::Kind::kTensor;
    if (d == Dims{-1}) d = {int64_t(v.size())};
    a.tensor.rank = int(d.size()), a.tensor.dims = d, a.tensor.dtype = t;
    a.tensor.values = std::move(v), a.tensor.has_values = true, a.tensor.constant = true;
    c.attrs.push_back(a);
    return c;
  }
};

inline Dims dims(const Node& n, size_t k = 0) {
  return k < n.out.size() && n.out[k].rank >= 0 ? n.out[k].dims : Dims{-99};
}

}  // namespace pw::graph::test
