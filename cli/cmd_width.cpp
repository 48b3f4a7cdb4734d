// `parwidth width MODEL [--json]`: the width statistics of a model file, so anyone can
// reproduce a plan's input from the file alone (docs/design.md, "The width statistics").
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/model_file.h"
#include "core/report.h"
#include "graph/graph.h"

namespace {

constexpr const char* kUsage =
    "usage: parwidth width MODEL [--json] [--input-shape NAME=1x3x224x224]...\n"
    "\n"
    "Prints the width statistics of a model graph: heavy ops H, layers L, average width\n"
    "W = max(1, floor(H/L)), the max level width and the weighted parallelism.\n"
    "MODEL: an ONNX model (.onnx), a TensorFlow GraphDef (.pb), a SavedModel (directory or\n"
    "saved_model.pb), one serialized TF2 FunctionDef (.fdef) or parwidth's JSON edge list\n"
    "(.json).\n"
    "Shapes are inferred from the model's input shapes (symbolic dims taken as 1, with a\n"
    "warning), so costs are FLOPs: work, span (the costliest path) and work/span.\n"
    "  --json                  print one JSON object instead of a table\n"
    "  --input-shape N=DxDx..  the shape of graph input N (repeatable; also\n"
    "                          N=..,M=.. in one argument, as PARWIDTH_INPUT_SHAPES)\n";

void usage(FILE* f) {
  std::fputs(kUsage, f);
}

void table_print(const pw::graph::Stats& s) {
  std::printf("source                %s\n", s.source.c_str());
  std::printf("nodes                 %llu\n", static_cast<unsigned long long>(s.nodes));
  std::printf("heavy ops (H)         %llu\n", static_cast<unsigned long long>(s.heavy));
  std::printf("layers (L)            %llu\n", static_cast<unsigned long long>(s.layers));
  std::printf("average width (W)     %llu\n", static_cast<unsigned long long>(s.avg_width));
  std::printf("max level width       %llu\n", static_cast<unsigned long long>(s.max_level_width));
  std::printf("weighted parallelism  %.3f (%s costs)\n", s.weighted_parallelism, s.costs.c_str());
  std::printf("work                  %.4g FLOPs (%llu of %llu nodes with known FLOPs)\n",
              s.work_flops, static_cast<unsigned long long>(s.known_flops_nodes),
              static_cast<unsigned long long>(s.nodes));
  std::printf("span                  %.4g FLOPs (costliest path)\n", s.span_flops);
  std::printf("work / span           %.3f\n", s.work_over_span);
  std::printf("bytes                 %.4g (read + written, known nodes)\n", s.bytes);
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
  bool json = false;
  std::string joined;
  std::vector<std::string> models;
  const std::vector<pw::cli::Option> opts = {pw::cli::flag("--json", &json),
                                             pw::cli::input_shapes("--input-shape", &joined)};
  if (const int rc = pw::cli::options_scan("parwidth width", argc, argv, opts,
                                           pw::cli::Ends::kNoRest, usage, nullptr, &models);
      rc >= 0)
    return rc;
  if (models.size() > 1) {
    std::fprintf(stderr, "parwidth: error: width: more than one MODEL given\n");
    return 2;
  }
  const char* model = models.empty() ? nullptr : models[0].c_str();
  pw::graph::InputShapes shapes;
  std::string shapes_err;
  // Each part was checked as it was read: the whole parses.
  pw::graph::input_shapes_parse(joined, &shapes, &shapes_err);
  if (!model) {
    std::fprintf(stderr, "parwidth: error: width: no MODEL given (see parwidth width --help)\n");
    return 2;
  }
  pw::graph::Graph g;
  pw::graph::Stats s;
  std::string err;
  std::vector<std::string> warnings;
  pw::graph::Status st = pw::files::model_load(model, &g, &err);
  if (st == pw::graph::Status::kOk) st = pw::graph::shapes_infer(&g, shapes, &warnings, &err);
  if (st == pw::graph::Status::kOk) st = pw::graph::stats_compute(g, &s, &err);
  for (const std::string& w : warnings) std::fprintf(stderr, "parwidth: warning: %s\n", w.c_str());
  if (st != pw::graph::Status::kOk) {
    // One line: a multi-line message would break scripts that read stderr line by line.
    for (char& c : err)
      if (c == '\n' || c == '\r') c = ' ';
    // Every message names the model (the readers' start with it; the statistics' do not).
    if (err.compare(0, strlen(model), model) != 0) err = std::string(model) + ": " + err;
    std::fprintf(stderr, "parwidth: error: %s\n", err.c_str());
    return 2;
  }
  if (json) {
    std::printf("%s\n", pw::report::stats_json(s).c_str());
  } else {
    table_print(s);
  }
  return 0;
}
