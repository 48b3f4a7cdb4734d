// `parwidth width MODEL [--json]`: the width statistics of a model file, so anyone can
// reproduce a plan's input from the file alone (DESIGN.md, "The width statistics").
#include <cstdio>
#include <cstring>
#include <string>

#include "graph/graph.h"

namespace {

constexpr const char* kUsage =
    "usage: parwidth width MODEL [--json]\n"
    "\n"
    "Prints the width statistics of a model graph: heavy ops H, layers L, average width\n"
    "W = max(1, floor(H/L)), the max level width and the weighted parallelism.\n"
    "MODEL: an ONNX model (.onnx), a TensorFlow GraphDef (.pb), a SavedModel (directory or\n"
    "saved_model.pb) or parwidth's JSON edge list (.json).\n"
    "  --json   print one JSON object instead of a table\n";

void print_table(const pw::graph::Stats& s) {
  std::printf("source                %s\n", s.source.c_str());
  std::printf("nodes                 %llu\n", static_cast<unsigned long long>(s.nodes));
  std::printf("heavy ops (H)         %llu\n", static_cast<unsigned long long>(s.heavy));
  std::printf("layers (L)            %llu\n", static_cast<unsigned long long>(s.layers));
  std::printf("average width (W)     %llu\n", static_cast<unsigned long long>(s.avg_width));
  std::printf("max level width       %llu\n", static_cast<unsigned long long>(s.max_level_width));
  std::printf("weighted parallelism  %.3f (%s costs)\n", s.weighted_parallelism, s.costs.c_str());
  for (const auto& [op, count] : s.heavy_by_type)
    std::printf("  %-20s %llu\n", op.c_str(), static_cast<unsigned long long>(count));
  if (!s.note.empty()) std::printf("note                  %s\n", s.note.c_str());
  size_t with_heavy = 0;
  for (const auto& sub : s.subgraphs) with_heavy += sub.heavy > 0;
  if (!s.subgraphs.empty())
    std::printf("subgraphs             %zu (%zu with heavy ops; --json lists them)\n",
                s.subgraphs.size(), with_heavy);
}

}  // namespace

int pw_cmd_width(int argc, char** argv) {
  const char* model = nullptr;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      std::fprintf(stderr, "parwidth: error: width: unknown option %s\n", argv[i]);
      return 2;
    } else if (model) {
      std::fprintf(stderr, "parwidth: error: width: more than one MODEL given\n");
      return 2;
    } else {
      model = argv[i];
    }
  }
  if (!model) {
    std::fprintf(stderr, "parwidth: error: width: no MODEL given (see parwidth width --help)\n");
    return 2;
  }
  pw::graph::Graph g;
  pw::graph::Stats s;
  std::string err;
  pw::graph::Status st = pw::graph::model_load(model, &g, &err);
  if (st == pw::graph::Status::kOk) st = pw::graph::stats_compute(g, &s, &err);
  if (st != pw::graph::Status::kOk) {
    // One line: a multi-line message would break scripts that read stderr line by line.
    for (char& c : err)
      if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(stderr, "parwidth: error: %s\n", err.c_str());
    return 2;
  }
  if (json) {
    std::printf("%s\n", pw::graph::stats_to_json(s).c_str());
  } else {
    print_table(s);
  }
  return 0;
}
