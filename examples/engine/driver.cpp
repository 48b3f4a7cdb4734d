// examples/engine/driver: `parwidth-engine MODEL [options]`: runs a model through
// libpwengine.so and prints the time per iteration and an output checksum.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "examples/engine/pwengine.h"

namespace {

const char kUsage[] =
    "usage: parwidth-engine MODEL [--iterations N] [--warmup N] [--batch B] [--image-size HW]\n"
    "                       [--inter N] [--intra N] [--seed S]\n"
    "\n"
    "Runs MODEL (.onnx, or the project's .json graph) and prints the session's thread\n"
    "counts, the time per iteration (median of N) and a checksum of the outputs.\n"
    "--inter/--intra: inter-op workers and OpenMP threads per operator (0 = the engine's\n"
    "defaults: every logical CPU). Missing weights are seeded random values.\n";

bool to_int(const char* s, long lo, long hi, long* out) {
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  long iterations = 10, warmup = 1, batch = 0, hw = 0, inter = 0, intra = 0, seed = 1;
  struct Flag {
    const char* name;
    long* v;
    long lo, hi;
  } flags[] = {{"--iterations", &iterations, 1, 1000000},
               {"--warmup", &warmup, 0, 1000000},
               {"--batch", &batch, 0, 1 << 20},
               {"--image-size", &hw, 0, 1 << 16},
               {"--inter", &inter, 0, 4096},
               {"--intra", &intra, 0, 4096},
               {"--seed", &seed, 0, 1L << 62}};
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(kUsage, stdout);
      return 0;
    }
    bool matched = false;
    for (Flag& f : flags) {
      if (strcmp(argv[i], f.name) != 0) continue;
      matched = true;
      if (i + 1 >= argc || !to_int(argv[i + 1], f.lo, f.hi, f.v)) {
        fprintf(stderr, "parwidth-engine: error: %s wants an integer %ld..%ld\n", f.name, f.lo,
                f.hi);
        return 2;
      }
      ++i;
    }
    if (matched) continue;
    if (argv[i][0] == '-' || path) {
      fprintf(stderr, "parwidth-engine: error: unexpected argument '%s'\n%s", argv[i], kUsage);
      return 2;
    }
    path = argv[i];
  }
  if (!path) {
    fputs(kUsage, stderr);
    return 2;
  }
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  if (!f || bytes.empty()) {
    fprintf(stderr, "parwidth-engine: error: cannot read %s\n", path);
    return 2;
  }
  pwe_session_options* o = pwe_session_options_new();
  pwe_session_options_set_inter_op_threads(o, static_cast<int>(inter));
  pwe_session_options_set_intra_op_threads(o, static_cast<int>(intra));
  pwe_session_options_set_batch(o, static_cast<int>(batch));
  pwe_session_options_set_image_size(o, static_cast<int>(hw));
  pwe_session_options_set_seed(o, static_cast<uint64_t>(seed));
  char err[512];
  pwe_session* s = pwe_session_new(bytes.data(), bytes.size(), o, err, sizeof err);
  pwe_session_options_free(o);
  if (!s) {
    fprintf(stderr, "parwidth-engine: error: %s: %s\n", path, err);
    return 2;
  }
  printf("engine: %s\n", pwe_version());
  printf("session: inter-op threads %d, intra-op threads %d\n", pwe_session_inter_op_threads(s),
         pwe_session_intra_op_threads(s));
  fflush(stdout);
  std::vector<double> ms;
  for (long i = 0; i < warmup + iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (pwe_session_run(s, err, sizeof err) != 0) {
      fprintf(stderr, "parwidth-engine: error: run failed: %s\n", err);
      pwe_session_free(s);
      return 1;
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  double checksum = 0;
  bool finite = true;
  for (int i = 0; i < pwe_session_num_outputs(s); ++i) {
    const float* d = nullptr;
    size_t n = 0;
    pwe_session_output(s, i, &d, &n, nullptr, nullptr);
    for (size_t k = 0; k < n; ++k) {
      checksum += d[k];
      finite &= std::isfinite(d[k]);
    }
  }
  printf("iterations: %ld, min %.3f ms, max %.3f ms\n", iterations, sorted.front(), sorted.back());
  printf("time per iteration: %.3f ms\n", median);
  printf("checksum: %.6e%s\n", checksum, finite ? "" : " (not finite)");
  pwe_session_free(s);
  return finite ? 0 : 1;
}
