// Public API of graph/: model-graph readers (ONNX, TF GraphDef/SavedModel, JSON) and the
// width statistics of DESIGN.md ("The width statistics").
//
// Error contract: every function returns a Status and fills its out-parameters only on
// kOk (on failure *err, when non-null, gets one line saying what went wrong). Nothing
// throws across this API (std::bad_alloc is caught and becomes kNoMemory), nothing aborts,
// nothing prints. Inputs are untrusted: any byte string yields a status, never a crash,
// a hang or unbounded recursion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pw::graph {

enum class Status {
  kOk = 0,
  kIoError,      // cannot open/read the path
  kBadFormat,    // bytes are not a model of the detected/requested format
  kUnsupported,  // a valid file of a kind we do not read (e.g. text protobuf)
  kCycle,        // the graph has a cycle: no width statistic exists
  kTooLarge,     // over a size limit (file, node count, inlining expansion)
  kNoMemory,     // allocation failed
  kInternal,     // a bug: an unexpected exception was caught
};

const char* status_name(Status s);

enum class Format { kAuto, kOnnx, kTfGraphDef, kTfSavedModel, kJson };

const char* format_name(Format f);  // "onnx", "tf-graphdef", "tf-savedmodel", "json"

struct Node {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;   // as written in the file; control inputs as "^name"
  std::vector<std::string> outputs;  // tensor names (ONNX); TF nodes output "name:i"
  std::vector<uint32_t> preds;       // resolved predecessors (data and control), indices
  int64_t operand0 = -1;             // producer of data input 0, or -1 (Gather rule)
  std::vector<int64_t> shape;        // first output's dims where known (-1: unknown dim)
  bool heavy = false;
  double flops = -1;  // this node's FLOPs, < 0 when unknown
};

struct Graph {
  std::string name;
  Format format = Format::kAuto;
  std::string path;
  std::vector<Node> nodes;
  // Control-flow bodies (ONNX If/Loop/Scan graph attributes) and TF library functions,
  // flattened, each with its own nodes. Their heavy ops are not part of the main
  // statistic (DESIGN: they count as their own graphs). Subgraphs have no subgraphs.
  std::vector<Graph> subgraphs;
  std::string note;  // how the executed graph was chosen (SavedModel), empty otherwise
};

struct Stats {
  std::string source;  // "<format>:<path>"
  std::string name;    // graph name
  uint64_t nodes = 0;
  uint64_t heavy = 0;               // H
  uint64_t layers = 0;              // L: longest path counted in heavy ops
  uint64_t avg_width = 1;           // W = max(1, floor(H / L)), 1 when H = 0
  uint64_t max_level_width = 0;     // most heavy nodes sharing one depth
  double weighted_parallelism = 1;  // total cost / most expensive path cost (1 when H = 0)
  std::string costs = "unit";       // "flops" when every heavy node's FLOPs are known
  std::map<std::string, uint64_t> heavy_by_type;
  std::vector<Stats> subgraphs;  // one per Graph::subgraphs entry, same order
  std::string note;
};

// Reads a model file. Format by path and content: a directory holding saved_model.pb, a
// file named saved_model.pb, *.onnx, *.json (or text starting with '{'), *.pb (GraphDef,
// else SavedModel), anything else by trying the binary readers in turn.
Status model_load(const std::string& path, Graph* out, std::string* err);

// Parses bytes already in memory (fuzzers, tests, a framework hook handing us a buffer).
Status model_parse(const void* data, size_t size, Format format, Graph* out, std::string* err);

// The statistics of g (and of each subgraph). Linear time; kCycle on a cyclic graph.
Status stats_compute(const Graph& g, Stats* out, std::string* err);

// One JSON object: heavy, layers, avg_width, max_level_width, weighted_parallelism,
// heavy_by_type, costs, nodes, source, name, subgraphs (and note when set).
std::string stats_to_json(const Stats& s);

}  // namespace pw::graph
