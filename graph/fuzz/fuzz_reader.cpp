// libFuzzer target for one graph/ reader (PW_FUZZ_FORMAT picks which): parse, infer shapes
// and costs, then compute the statistics and their JSON, so the whole path from bytes to
// output is exercised.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pw::graph::Graph g;
  std::string err;
  if (pw::graph::model_parse(data, size, pw::graph::Format::PW_FUZZ_FORMAT, &g, &err) !=
      pw::graph::Status::kOk)
    return 0;
  std::vector<std::string> warnings;
  if (pw::graph::shapes_infer(&g, {}, &warnings, &err) != pw::graph::Status::kOk) return 0;
  pw::graph::Stats s;
  (void)pw::graph::stats_compute(g, &s, &err);
  return 0;
}
