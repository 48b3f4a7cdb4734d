// Internal interface between model_load.cpp and the per-format readers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace pw::graph {

// Limits that keep hostile inputs bounded. A real model is far below each.
constexpr size_t kMaxNodes = 4'000'000;  // nodes in one graph, after TF call inlining
constexpr int kMaxInlineDepth = 16;      // nested TF function calls inlined

// Each reader fills *out (nodes, preds, heavy, subgraphs; flops where the file gives them:
// ONNX shapes, JSON "flops") or returns an error.
Status onnx_read(std::string_view bytes, Graph* out, std::string* err);
Status tf_graphdef_read(std::string_view bytes, Graph* out, std::string* err);
Status tf_savedmodel_read(std::string_view bytes, Graph* out, std::string* err);
// arg_handles: function_parse's (graph.h); empty for a FunctionDef read alone.
Status tf_functiondef_read(std::string_view bytes, const std::vector<std::string>& arg_handles,
                           Graph* out, std::string* err);
Status json_read(std::string_view text, Graph* out, std::string* err);

inline Status fail(std::string* err, Status s, std::string msg) {
  if (err) *err = std::move(msg);
  return s;
}

}  // namespace pw::graph
