// hooks/tf_functions: TensorFlow 2 function graphs (a traced tf.function, Keras's
// train and predict steps) read as TensorFlow adds them to the eager context, with
// their variables' shapes taken where TensorFlow makes the function: for the
// report and the program's memory (runtime/functions). hooks/README.md, "TF2
// function graphs".
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/slots.h"
#include "hooks/tf_common.h"
#include "hooks/tf_handles.h"
#include "runtime/api.h"
#include "runtime/functions.h"

namespace pw::hooks {
namespace {

// One function graph TensorFlow added to the eager context: its width and
// costs for the report and the program's memory. The plan in force is left
// alone: the eager context's pools were sized before any function existed.
// handles: its arguments' handle data, where TF gave it when it made the function.
void function_read(const void* data, size_t n, const char* how,
                   const std::vector<std::string>& handles) {
  graph::Graph g;
  graph::Stats st;
  std::string err;
  std::vector<std::string> shape_warnings;
  graph::Status s = graph::function_parse(data, n, handles, &g, &err);
  if (s == graph::Status::kOk) s = graph::shapes_infer(&g, {}, &shape_warnings, &err);
  if (s == graph::Status::kOk) s = graph::stats_compute(g, &st, &err);
  if (s == graph::Status::kOk)
    functions::function_seen(g, st, how);
  else
    functions::function_unreadable(how, std::string(status_name(s)) + ": " + err);
}

// A TF_Function, serialised through the C API.
void function_read_c(TF_Function* fn, const void* pc) {
  auto new_buffer = PW_REAL_AT(TF_NewBuffer, pc);
  auto delete_buffer = PW_REAL_AT(TF_DeleteBuffer, pc);
  auto new_status = PW_REAL_AT(TF_NewStatus, pc);
  auto delete_status = PW_REAL_AT(TF_DeleteStatus, pc);
  auto to_fdef = PW_REAL_AT(TF_FunctionToFunctionDef, pc);
  if (!fn || !new_buffer || !delete_buffer || !new_status || !delete_status || !to_fdef) {
    functions::function_unreadable("TFE_ContextAddFunction", "TF_FunctionToFunctionDef not found");
    return;
  }
  const std::vector<std::string> handles = tf::handles_take(fn);
  TF_Buffer* buf = new_buffer();
  TF_Status* st = new_status();
  if (buf && st) {
    to_fdef(fn, buf, st);
    if (status_code(st, pc) == 0 && buf->data && buf->length > 0)
      function_read(buf->data, buf->length, "TFE_ContextAddFunction", handles);
    else
      functions::function_unreadable("TFE_ContextAddFunction", "TF_FunctionToFunctionDef failed");
  }
  if (st) delete_status(st);
  if (buf) delete_buffer(buf);
}

// The handle data of a function's resource arguments (its variables' dtypes and shapes),
// which TF keeps on the graph the function is made from and leaves out of the
// FunctionDef: read while that graph is at hand, used when the function is added.
void handles_read(const TF_Graph* body, TF_Function* fn, int ninputs, const TF_Output* inputs,
                  const void* pc) {
  auto output_type = PW_REAL_AT(TF_OperationOutputType, pc);
  auto handle_data = PW_REAL_AT(TF_GetHandleShapeAndType, pc);
  auto delete_buffer = PW_REAL_AT(TF_DeleteBuffer, pc);
  if (!output_type || !handle_data || !delete_buffer || ninputs <= 0 || !inputs) return;
  constexpr int kTfResource = 20;  // TF_RESOURCE
  std::vector<std::string> handles(static_cast<size_t>(ninputs));
  bool any = false;
  for (int i = 0; i < ninputs; ++i) {
    if (!inputs[i].oper || output_type(inputs[i]) != kTfResource) continue;
    TF_Buffer* b = handle_data(const_cast<TF_Graph*>(body), inputs[i]);
    if (!b) continue;
    if (b->data && b->length > 0) {
      handles[static_cast<size_t>(i)].assign(static_cast<const char*>(b->data), b->length);
      any = true;
    }
    delete_buffer(b);
  }
  if (any) tf::handles_remember(fn, std::move(handles));
}

}  // namespace
}  // namespace pw::hooks

using pw::hooks::Guard;

// TF2 function graphs: Python adds a traced tf.function (Keras's train and
// predict steps) as a TF_Function, a FunctionDef from a SavedModel as bytes.
// Read after the real call, only when TF accepted the function.
PW_HOOK(void, TFE_ContextAddFunctionDef,
        (TFE_Context * ctx, const char* serialized_function_def, size_t size, TF_Status* status)) {
  auto real = PW_REAL(TFE_ContextAddFunctionDef);
  if (!real) {
    PW_MISSING(TFE_ContextAddFunctionDef);
    return;
  }
  const void* pc = __builtin_return_address(0);
  real(ctx, serialized_function_def, size, status);
  Guard guard;
  if (guard.entered() && serialized_function_def && pw::hooks::tf_active() &&
      pw::hooks::status_code(status, pc) == 0) {
    pw::hooks::fail_open("tf-function-def", [&] {
      pw::hooks::function_read(serialized_function_def, size, "TFE_ContextAddFunctionDef", {});
    });
  }
}

PW_HOOK(void, TFE_ContextAddFunction,
        (TFE_Context * ctx, TF_Function* function, TF_Status* status)) {
  auto real = PW_REAL(TFE_ContextAddFunction);
  if (!real) {
    PW_MISSING(TFE_ContextAddFunction);
    return;
  }
  const void* pc = __builtin_return_address(0);
  real(ctx, function, status);
  Guard guard;
  if (guard.entered() && function && pw::hooks::tf_active() &&
      pw::hooks::status_code(status, pc) == 0) {
    pw::hooks::fail_open("tf-function", [&] { pw::hooks::function_read_c(function, pc); });
  }
}

// A tf.function made from its graph (Python's TF_GraphToFunction_wrapper calls this
// inside libtensorflow_cc, through its PLT): the arguments' handle data, for
// TFE_ContextAddFunction above. Read after the real call, only when it made a function.
PW_HOOK(TF_Function*, TF_GraphToFunctionWithControlOutputs,
        (const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
         int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
         int noutputs, const TF_Output* outputs, const char* const* output_names,
         int ncontrol_outputs, const TF_Operation* const* control_outputs,
         const char* const* control_output_names, const TF_FunctionOptions* opts,
         const char* description, TF_Status* status)) {
  auto real = PW_REAL(TF_GraphToFunctionWithControlOutputs);
  if (!real) {
    PW_MISSING(TF_GraphToFunctionWithControlOutputs);
    return nullptr;
  }
  const void* pc = __builtin_return_address(0);
  TF_Function* fn = real(fn_body, fn_name, append_hash_to_fn_name, num_opers, opers, ninputs,
                         inputs, noutputs, outputs, output_names, ncontrol_outputs, control_outputs,
                         control_output_names, opts, description, status);
  Guard guard;
  if (guard.entered() && fn && fn_body && pw::hooks::tf_active() &&
      pw::hooks::status_code(status, pc) == 0) {
    pw::hooks::fail_open("tf-graph-to-function",
                         [&] { pw::hooks::handles_read(fn_body, fn, ninputs, inputs, pc); });
  }
  return fn;
}
