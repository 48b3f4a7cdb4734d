// runtime/functions: the TensorFlow 2 function graphs a process added to its
// eager context (for the report), and their memory per program in the cache
// directory (tf-functions-<identity hash>.txt), so that the next run of the
// same program sizes its eager context from them. The policy (identity,
// which graph stands for the program, the text format) is
// governor/function_memory; this file does the I/O. Nothing here throws.
#pragma once

#include <string>

#include "core/planning.h"
#include "graph/graph.h"

namespace pw::functions {

// A function graph read from TensorFlow (hooks/tf.cpp): kept for the report
// and, at exit, for the memory. `how` says where it was read ("TFE_ContextAddFunction").
void function_seen(const graph::Graph& g, const graph::Stats& st, const std::string& how);
// A function graph that could not be read: reported with the reason.
void function_unreadable(const std::string& how, const std::string& why);

// The graph remembered for this program by an earlier run, as a summary that
// rt::graph_adopt plans from (its source and remembered fields say where it
// came from). false when there is none or it is unusable; *warning is set
// (one line) when a file exists but is corrupt, unreadable or of another
// program. Called once, before the eager context is made.
bool recall(planning::GraphSummary* out, std::string* warning);

// The report's "functions" array and "function_memory" object.
std::string functions_json();
std::string memory_json();

// At exit: remembers the graph that stands for this run's function graphs
// (nothing is written when none had a heavy operator). *warning on failure.
void save_at_exit(std::string* warning);

// A fork()ed child forgets its parent's graphs.
void after_fork();

}  // namespace pw::functions
