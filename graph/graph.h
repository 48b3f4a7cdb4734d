// Public API of graph/: model-graph readers (ONNX, TF GraphDef/SavedModel, JSON) and the
// width statistics of docs/design.md ("The width statistics").
//
// Error contract: every function that can fail returns a Status and fills its
// out-parameters only on kOk (on failure *err, when non-null, gets one line saying what went
// wrong). Nothing throws across this API (std::bad_alloc is caught and becomes kNoMemory), nothing
// aborts, nothing prints. Inputs are untrusted: any byte string yields a status, never a crash, a
// hang or unbounded recursion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace pw::graph {

// Statuses returned here: kOk, kIoError, kBadFormat, kUnsupported (a valid file of a kind
// not read, e.g. text protobuf), kCycle, kTooLarge, kNoMemory, kInternal.
using Status = pw::Status;

// kTfFunctionDef: one serialized FunctionDef (a TF2 function graph, as TensorFlow adds it
// to an eager context); only read when asked for, never guessed by kAuto.
enum class Format { kAuto, kOnnx, kTfGraphDef, kTfSavedModel, kJson, kTfFunctionDef };

// "onnx", "tf-graphdef", "tf-savedmodel", "json", "tf-functiondef" ("auto" for kAuto)
const char* format_name(Format f);
// TensorFlow's op set and naming (GraphDef, SavedModel, FunctionDef).
inline bool format_is_tf(Format f) {
  return f == Format::kTfGraphDef || f == Format::kTfSavedModel || f == Format::kTfFunctionDef;
}

// Element types, numbered as ONNX's TensorProto.DataType (TF's DataType is mapped onto it).
enum class DType : int32_t {
  kUnknown = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

int dtype_size(DType t);  // bytes per element; 4 when unknown (string: 8)

// Most elements a folded constant (TensorInfo::values) may hold: hostile models cannot
// make shape inference allocate without bound.
constexpr size_t kMaxFoldedElements = 4096;

// What is known statically about one tensor. A dim of -1 is unknown; rank -1 (dims empty)
// means even the rank is unknown; a scalar has rank 0 and no dims.
struct TensorInfo {
  std::vector<int64_t> dims;
  int rank = -1;
  DType dtype = DType::kUnknown;
  // Integer (and bool) element values, row-major, when known: small initializers and
  // Constants with data, and what shapes_infer folds from them (Shape, Gather, Concat,
  // Unsqueeze, arithmetic on such): Reshape targets, Slice bounds. At most
  // kMaxFoldedElements values.
  std::vector<int64_t> values;
  bool has_values = false;
  bool constant = false;  // an initializer / Constant / Const (weights stripped or not)

  bool known() const;        // rank known and every dim >= 0
  int64_t elements() const;  // product of dims; -1 unless known() (saturates at 2^62)
};

// One attribute of an ONNX node or a TF NodeDef, generically. TF attrs map as: i and b ->
// kInt, f -> kFloat, s -> kString, type -> kInt (a DType), list(i) -> kInts, list(f) ->
// kFloats, list(s) -> kStrings, shape -> kInts (dims, -1 unknown), tensor -> kTensor.
// list(shape) (TF's _output_shapes) -> kShapes. ONNX graph-valued attributes are kGraph
// (their bodies are in Graph::subgraphs).
struct Attr {
  enum class Kind {
    kInt,
    kFloat,
    kString,
    kInts,
    kFloats,
    kStrings,
    kTensor,
    kGraph,
    kShapes,
    kOther
  };
  std::string name;
  Kind kind = Kind::kOther;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  TensorInfo tensor;               // kTensor: dims, dtype, small integer values
  std::vector<TensorInfo> shapes;  // kShapes: dims and rank of each (dtype unknown)
};

struct Node {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;   // as written in the file; control inputs as "^name"
  std::vector<std::string> outputs;  // tensor names (ONNX); TF: filled by shapes_infer, "name:i"
  std::vector<uint32_t> preds;       // resolved predecessors (data and control), indices
  int64_t operand0 = -1;             // producer of data input 0, or -1 (Gather rule)
  // Where each entry of inputs comes from: node index and its output index. node -1: not a
  // node of this graph (graph input, initializer, outer value, omitted input); control
  // inputs have output -1.
  struct Source {
    int64_t node = -1;
    int output = 0;
  };
  std::vector<Source> sources;  // parallel to inputs
  std::vector<int64_t> shape;   // first output's dims where known (-1: unknown dim)
  bool heavy = false;
  double flops = -1;        // this node's FLOPs, < 0 when unknown (graph/README.md, per op)
  double bytes = -1;        // bytes read (inputs incl. weights) + written (outputs), < 0 unknown
  std::vector<Attr> attrs;  // the node's attributes, in file order
  std::vector<TensorInfo> out;  // per output (parallel to outputs), set by shapes_infer

  const Attr* attr(const std::string& n) const;  // nullptr when absent
  int64_t attr_int(const std::string& n, int64_t dflt) const;
  double attr_float(const std::string& n, double dflt) const;
  std::string attr_string(const std::string& n, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& n) const;  // empty when absent
};

struct Graph {
  std::string name;
  Format format = Format::kAuto;
  std::string path;
  std::vector<Node> nodes;
  // Control-flow bodies (ONNX If/Loop/Scan graph attributes) and TF library functions,
  // flattened, each with its own nodes. Their heavy ops are not part of the main
  // statistic (docs/design.md: they count as their own graphs). Subgraphs have no subgraphs.
  std::vector<Graph> subgraphs;
  std::string note;  // how the executed graph was chosen (SavedModel), empty otherwise
  // Graph inputs in file order (ONNX inputs that are not initializers; TF Placeholders)
  // and ONNX graph outputs.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Tensors the file describes by name: ONNX initializers (constant, with values when they
  // are small integers), graph inputs and outputs, value_info.
  std::map<std::string, TensorInfo> tensors;
};

// ---------------------------------------------------------------- shapes and costs

// Shapes a user gives for graph inputs, by name (a TF name may carry ":0").
using InputShapes = std::map<std::string, std::vector<int64_t>>;

// Parses "name=1x3x224x224,name2=8x16" (--input-shape, PARWIDTH_INPUT_SHAPES); "name="
// is a scalar. kBadFormat with *err naming the bad entry.
Status input_shapes_parse(const std::string& text, InputShapes* out, std::string* err);

// The graph inputs' shapes at the batch and spatial size a session was asked to run at:
// dim 0 of every input becomes `batch`, H and W (dims 2, 3) of every 4-D input become
// `hw`; 0 keeps the file's. The other dims are the file's, a symbolic one 1 (as
// shapes_infer reads it). Inputs whose rank the file does not give are left out. Empty
// when batch and hw are both 0.
InputShapes input_shapes_resized(const Graph& g, int64_t batch, int64_t hw);

// Infers every node's outputs (Node::out, Node::shape; TF nodes get outputs "name:i"),
// folds small integer constants, and sets each node's flops and bytes (graph/README.md,
// "Costs per operator"). Graph input shapes come from `given`, else from the file; an
// unknown or symbolic dim of a graph input becomes 1, with a warning. An op it cannot
// infer: one warning per op type (none for TF's checkpoint, control and variable-update
// ops); its outputs and all that depends on them stay unknown
// (-1, never guessed) and it costs the documented default. Subgraphs are inferred too
// (values from the enclosing graph unknown). Idempotent. Fails only with kNoMemory or
// kInternal; warnings are appended to *warnings (may be null), never printed.
Status shapes_infer(Graph* g, const InputShapes& given, std::vector<std::string>* warnings,
                    std::string* err);

// The FLOPs and bytes of one node given its inputs' TensorInfo (`in`, parallel to
// node.inputs; default TensorInfo for an omitted or unknown input) and node.out. < 0 when
// not known. shapes_infer uses it; public for tests and executors.
void node_cost(const Node& node, Format format, const std::vector<TensorInfo>& in, double* flops,
               double* bytes);

struct Stats {
  std::string source;  // "<format>:<path>"
  std::string name;    // graph name
  uint64_t nodes = 0;
  uint64_t heavy = 0;               // H
  uint64_t layers = 0;              // L: longest path counted in heavy ops
  uint64_t avg_width = 1;           // W = max(1, floor(H / L)), 1 when H = 0
  uint64_t max_level_width = 0;     // most heavy nodes sharing one depth
  double weighted_parallelism = 1;  // total cost / most expensive path cost (1 when H = 0)
  std::string costs = "unit";       // "flops" when every heavy node's FLOPs are known and > 0
  // Over every node (heavy or not) whose flops are known: total work, the costliest path
  // (span) and their ratio; 1 when there is no work. known_flops_nodes counts the nodes
  // that had FLOPs (the others count 0 here).
  double work_flops = 0;
  double span_flops = 0;
  double work_over_span = 1;
  double bytes = 0;  // sum of the known per-node bytes
  uint64_t known_flops_nodes = 0;
  std::map<std::string, uint64_t> heavy_by_type;
  // FLOPs of the heavy nodes by op type, over those whose FLOPs are known (2 x MACs for
  // the convolutions and matmuls, plus one per output for a bias: costs.cpp), so that
  // shape inference can be checked against another's, type by type.
  std::map<std::string, double> heavy_flops_by_type;
  double heavy_flops = 0;
  std::vector<Stats> subgraphs;  // one per Graph::subgraphs entry, same order
  std::string note;
};

// Parses a model file's bytes, read by the caller (core/model_file's model_load: a
// directory's saved_model.pb, else the file itself). `file` is the file the bytes came
// from and decides the format with the content: saved_model.pb, *.onnx, *.json (or text
// starting with '{'), *.pb (GraphDef, else SavedModel), anything else by trying the
// binary readers in turn; *.pbtxt is refused. `path` is what the user named: it is
// kept in Graph::path and starts the error messages.
Status model_parse_file(const std::string& path, const std::string& file, std::string_view data,
                        Graph* out, std::string* err);

// Parses bytes already in memory (fuzzers, tests, a framework hook handing us a buffer).
Status model_parse(const void* data, size_t size, Format format, Graph* out, std::string* err);

// A TF function as TensorFlow adds it to an eager context (one FunctionDef, as
// Format::kTfFunctionDef), with what TF knows about its resource arguments and leaves out
// of the FunctionDef: arg_handles[i] is argument i's handle data, serialized
// CppShapeInferenceResult.HandleData as TF_GetHandleShapeAndType returns it for the graph
// the function was made from; empty where there is none (a list of another length than
// the function's arguments is not used). An argument with handle data
// reads as its variable (a VarHandleOp of that dtype and shape), as one whose ArgDef
// carries handle_data does: Keras's train steps carry none, and a convolution kernel's
// size appears nowhere else in them.
Status function_parse(const void* data, size_t size, const std::vector<std::string>& arg_handles,
                      Graph* out, std::string* err);

// The statistics of g (and of each subgraph). Linear time; kCycle on a cyclic graph.
Status stats_compute(const Graph& g, Stats* out, std::string* err);

// The graph's fingerprint: 16 hex digits hashing what decides its best thread plan, the
// operators in order (type, predecessors, output shapes, FLOPs and bytes), not their names.
// The same model read the same way (file or bytes, same input shapes) gets the same one;
// measured plans are stored under it (governor/plan_store). Call after shapes_infer.
std::string fingerprint(const Graph& g);

}  // namespace pw::graph
