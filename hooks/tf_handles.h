// hooks/tf_handles: what TensorFlow knows about a function's resource arguments (each
// variable's dtype and shape, its "handle data") when it makes the function from a
// graph, kept until the function is added to the eager context, where hooks/tf.cpp reads
// it: the FunctionDef itself leaves it out (hooks/README.md, "TF2 function graphs").
#pragma once

#include <string>
#include <vector>

namespace pw::hooks::tf {

// The handle data of each argument of the function `fn` (empty where none), replacing
// what an earlier function at the same address left. A few functions at most wait.
void handles_remember(const void* fn, std::vector<std::string> handles);
// What was remembered for `fn`, taken (empty when nothing).
std::vector<std::string> handles_take(const void* fn);

}  // namespace pw::hooks::tf
