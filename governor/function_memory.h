// governor/function_memory: what a TensorFlow 2 program's function graphs
// taught one run, kept for the next run of the same program. TF2 sizes its
// eager context before it traces any function, so a run can only be planned
// from the graphs of an earlier one.
//
// Pure: the program's identity from its (already resolved) command line,
// which function graph stands for the program, and the memory's text format.
// The caller reads /proc, resolves paths and does the file I/O
// (runtime/functions.cpp). Nothing here throws but std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "governor/graph_width.h"
#include "governor/schedule.h"

namespace pw::gov {

// One function graph's statistics (graph/README.md) and, when every heavy
// operator's FLOPs were known, its operators' costs.
// costs "flops": cost_graph holds every operator.
struct FunctionGraph : GraphWidth {
  std::string name;
  CostGraph cost_graph;
};

// The program's identity, as text (hashed into the file name by the caller).
// argv: the command line; resolved[i] (parallel, may be shorter): the
// resolved path when argv[i] names an existing file, else "" (resolved[0]:
// the executable). Kept: the executable, the first argument that names a file
// (the script, wherever it lives), and every other argument except the
// volatile ones: an argument, or the value of `--opt=value`, that lies under
// one of temp_dirs (this run's output files). A named file counts by its
// resolved path, so `./train.py` and `/home/u/train.py` are one program.
// Parts are joined with '\0'.
std::string program_identity(const std::vector<std::string>& argv,
                             const std::vector<std::string>& resolved,
                             const std::vector<std::string>& temp_dirs);

int function_pick(const std::vector<FunctionGraph>& graphs);

// Text format (version 1), one record:
//   parwidth-tf-functions 1
//   program <identity hash, 16 hex digits>
//   saved <unix seconds>
//   function <name> <heavy> <layers> <avg_width> <max_level_width> <weighted>
//            <costs> <work_flops> <span_flops> <ops>        (one line)
//   op <flops> <bytes> <pred> <pred> ...                    (<ops> lines)
//   end
// Names are TF function names ([A-Za-z0-9_.-/], at most 256 bytes).
constexpr size_t kFunctionMemoryMaxBytes = 8u << 20;  // 8 MiB
constexpr size_t kFunctionMemoryMaxOps = 200000;

struct FunctionMemory {
  std::string program;  // the identity hash
  int64_t saved = 0;
  FunctionGraph graph;
};

std::string function_memory_format(const FunctionMemory& m);

// false with *why (one phrase) on anything malformed: wrong header or version,
// a bad number, a name with other characters, a pred out of range, ops that
// do not match the count, a missing "end", text over the cap.
bool function_memory_parse(const std::string& text, FunctionMemory* out, std::string* why);

// 64-bit FNV-1a of s, as 16 lowercase hex digits.
std::string identity_hash(const std::string& s);

}  // namespace pw::gov
