// The heavy-operator table of docs/design.md ("Heavy operators"), the only place that says which
// ops count toward the width statistics.
#pragma once

#include <cstddef>
#include <string_view>

namespace pw::graph {

enum class Framework { kOnnx, kTf };

enum class HeavyRule {
  kAlways,         // the op is heavy wherever it appears
  kConstOperand0,  // heavy only when data operand 0 is a constant/variable (embedding lookup)
};

struct HeavyOp {
  Framework framework;
  std::string_view name;
  bool prefix;  // name is a prefix (op families such as _MklConv2D*, BatchMatMul*)
  HeavyRule rule;
};

// The table, for tests that want one case per entry.
const HeavyOp* heavy_ops_table(size_t* count);

// The entry matching op in framework, or nullptr when op is light.
const HeavyOp* heavy_op_find(Framework framework, std::string_view op);

// TF ops that produce a constant or variable value: the params of a heavy Gather.
bool tf_is_param_source(std::string_view op);

}  // namespace pw::graph
