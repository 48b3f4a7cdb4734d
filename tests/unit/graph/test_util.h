// Helpers for graph/ tests: build graphs by hand and encode protobuf messages byte by byte.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace pw::graph::test {

// A graph from (name, op, heavy, preds) rows; preds name earlier or later rows.
struct Row {
  std::string name;
  bool heavy;
  std::vector<std::string> preds;
  double flops = -1;
};

inline Graph make_graph(const std::vector<Row>& rows) {
  Graph g;
  g.format = Format::kJson;
  g.name = "test";
  for (const Row& r : rows) {
    Node n;
    n.name = r.name;
    n.op = r.heavy ? "MatMul" : "Relu";
    n.heavy = r.heavy;
    n.flops = r.flops;
    g.nodes.push_back(n);
  }
  for (size_t i = 0; i < rows.size(); ++i)
    for (const std::string& p : rows[i].preds)
      for (size_t j = 0; j < rows.size(); ++j)
        if (rows[j].name == p) g.nodes[i].preds.push_back(static_cast<uint32_t>(j));
  return g;
}

// Protobuf encoding, enough to write ONNX and TF messages in tests.
inline std::string varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    s.push_back(static_cast<char>(v ? (b | 0x80) : b));
  } while (v);
  return s;
}
inline std::string field_varint(uint32_t n, uint64_t v) {
  return varint(uint64_t(n) << 3) + varint(v);
}
inline std::string field_bytes(uint32_t n, const std::string& b) {
  return varint((uint64_t(n) << 3) | 2) + varint(b.size()) + b;
}

// ONNX
inline std::string onnx_node(const std::string& op, std::vector<std::string> in,
                             std::vector<std::string> out, const std::string& name = "",
                             const std::string& attrs = "") {
  std::string s;
  for (auto& i : in) s += field_bytes(1, i);
  for (auto& o : out) s += field_bytes(2, o);
  if (!name.empty()) s += field_bytes(3, name);
  s += field_bytes(4, op);
  s += attrs;
  return field_bytes(1, s);  // as GraphProto.node
}
inline std::string onnx_initializer(const std::string& name, std::vector<int64_t> dims,
                                    bool external = false) {
  std::string t;
  for (int64_t d : dims) t += field_varint(1, uint64_t(d));
  t += field_varint(2, 1);  // FLOAT
  t += field_bytes(8, name);
  if (external) {
    t += field_bytes(13, field_bytes(1, "location") + field_bytes(2, "weights.bin"));
    t += field_varint(14, 1);  // EXTERNAL
  }
  return field_bytes(5, t);
}
inline std::string onnx_input(const std::string& name) {
  return field_bytes(11, field_bytes(1, name));
}
inline std::string onnx_graph_attr(const std::string& attr, const std::string& graph_body) {
  return field_bytes(5, field_bytes(1, attr) + field_bytes(6, graph_body) + field_varint(20, 5));
}
inline std::string onnx_model(const std::string& graph_body) {
  return field_varint(1, 8) + field_bytes(7, graph_body);
}

// TensorFlow
inline std::string tf_node(const std::string& name, const std::string& op,
                           std::vector<std::string> in, const std::string& call = "") {
  std::string s = field_bytes(1, name) + field_bytes(2, op);
  for (auto& i : in) s += field_bytes(3, i);
  if (!call.empty())
    s +=
        field_bytes(5, field_bytes(1, "f") + field_bytes(2, field_bytes(10, field_bytes(1, call))));
  return s;
}
inline std::string tf_graph(std::initializer_list<std::string> nodes, const std::string& lib = "") {
  std::string s;
  for (auto& n : nodes) s += field_bytes(1, n);
  if (!lib.empty()) s += field_bytes(2, lib);
  return s;
}
inline std::string tf_function(const std::string& name, std::vector<std::string> args,
                               std::vector<std::pair<std::string, std::string>> rets,
                               std::initializer_list<std::string> nodes) {
  std::string sig = field_bytes(1, name);
  for (auto& a : args) sig += field_bytes(2, field_bytes(1, a));
  for (auto& r : rets) sig += field_bytes(3, field_bytes(1, r.first));
  std::string s = field_bytes(1, sig);
  for (auto& n : nodes) s += field_bytes(3, n);
  for (auto& r : rets) s += field_bytes(4, field_bytes(1, r.first) + field_bytes(2, r.second));
  return field_bytes(1, s);  // as FunctionDefLibrary.function
}

inline Stats stats_of(const std::string& bytes, Format f) {
  Graph g;
  Stats s;
  std::string err;
  if (model_parse(bytes.data(), bytes.size(), f, &g, &err) != Status::kOk) {
    s.note = "parse failed: " + err;
    s.heavy = 999999;
    return s;
  }
  if (stats_compute(g, &s, &err) != Status::kOk) {
    s.note = "stats failed: " + err;
    s.heavy = 999998;
  }
  return s;
}

}  // namespace pw::graph::test
