// core/model_file: reads a model the user names (a file, or a SavedModel directory) and
// hands its bytes to graph/'s parser, which does no I/O of its own.
#pragma once

#include <string>

#include "graph/graph.h"

namespace pw::files {

// A directory is read as its saved_model.pb; a file as itself (symlinks followed, FIFOs
// and devices refused without blocking, 2 GiB at most, protobuf's own limit). The
// format is then decided by graph::model_parse_file. Errors start with the path.
graph::Status model_load(const std::string& path, graph::Graph* out, std::string* err);

}  // namespace pw::files
