// examples/engine/driver: `parwidth-engine MODEL [options]`: runs a model through
// libpwengine.so and prints the time per iteration and an output checksum, or with
// --profile each operator's time at each OpenMP team size asked for.
#include <sched.h>

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
    "                       [--profile [--profile-threads LIST]]\n"
    "\n"
    "Runs MODEL (.onnx, or the project's .json graph) and prints the session's thread\n"
    "counts, the time per iteration (median of N) and a checksum of the outputs.\n"
    "--inter/--intra: inter-op workers and OpenMP threads per operator (0 = the engine's\n"
    "defaults: every logical CPU). Missing weights are seeded random values.\n"
    "--profile: one inter-op worker (each operator timed alone), for each team size T in\n"
    "--profile-threads (e.g. 1,2,4; default 1..logical CPUs): every operator's median time\n"
    "over the iterations, its predecessors, and the sums: `profile: op I TYPE preds P,Q ms\n"
    "T1 T2 ... name NAME`, `profile: work ms ...` (all operators), `profile: span ms ...`\n"
    "(the longest path through the graph).\n";

bool to_int(const char* s, long lo, long hi, long* out) {
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool parse_threads(const char* s, std::vector<int>* out) {
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    long v = 0;
    if (!to_int(part.c_str(), 1, 4096, &v)) return false;
    out->push_back(static_cast<int>(v));
  }
  return !out->empty();
}

struct Settings {
  long iterations, warmup, batch, hw, inter, intra, seed;
};

pwe_session* open_session(const std::string& bytes, const Settings& st, const char* path) {
  pwe_session_options* o = pwe_session_options_new();
  pwe_session_options_set_inter_op_threads(o, static_cast<int>(st.inter));
  pwe_session_options_set_intra_op_threads(o, static_cast<int>(st.intra));
  pwe_session_options_set_batch(o, static_cast<int>(st.batch));
  pwe_session_options_set_image_size(o, static_cast<int>(st.hw));
  pwe_session_options_set_seed(o, static_cast<uint64_t>(st.seed));
  char err[512];
  pwe_session* s = pwe_session_new(bytes.data(), bytes.size(), o, err, sizeof err);
  pwe_session_options_free(o);
  if (!s) fprintf(stderr, "parwidth-engine: error: %s: %s\n", path, err);
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// --profile: each team size in its own session with one inter-op worker, so an operator's
// time is its own at that team size, not shared with a concurrent one.
int profile(const std::string& bytes, Settings st, const std::vector<int>& teams,
            const char* path) {
  std::vector<std::vector<double>> ms;  // [team][op]
  std::vector<std::string> names, types;
  std::vector<std::vector<int>> preds;
  for (int team : teams) {
    st.inter = 1;
    st.intra = team;
    pwe_session* s = open_session(bytes, st, path);
    if (!s) return 2;
    const int n = pwe_session_num_ops(s);
    pwe_session_set_profiling(s, 1);
    std::vector<std::vector<double>> runs(static_cast<size_t>(n));
    char err[512];
    for (long i = 0; i < st.warmup + st.iterations; ++i) {
      if (pwe_session_run(s, err, sizeof err) != 0) {
        fprintf(stderr, "parwidth-engine: error: run failed: %s\n", err);
        pwe_session_free(s);
        return 1;
      }
      for (int k = 0; i >= st.warmup && k < n; ++k) {
        double t = 0;
        pwe_session_op(s, k, nullptr, nullptr, nullptr, nullptr, &t);
        runs[static_cast<size_t>(k)].push_back(t);
      }
    }
    std::vector<double> med;
    med.reserve(runs.size());
    for (const auto& r : runs) med.push_back(median(r));
    ms.push_back(std::move(med));
    if (names.empty()) {
      for (int k = 0; k < n; ++k) {
        const char *name = nullptr, *type = nullptr;
        const int* p = nullptr;
        int np = 0;
        pwe_session_op(s, k, &name, &type, &p, &np, nullptr);
        names.push_back(name);
        types.push_back(type);
        preds.emplace_back(p, p + np);
      }
    }
    pwe_session_free(s);
  }
  printf("engine: %s\n", pwe_version());
  printf("profile: team sizes");
  for (int t : teams) printf(" %d", t);
  printf("\n");
  for (size_t k = 0; k < names.size(); ++k) {
    printf("profile: op %zu %s preds ", k, types[k].c_str());
    for (size_t j = 0; j < preds[k].size(); ++j) printf("%s%d", j ? "," : "", preds[k][j]);
    printf("%s ms", preds[k].empty() ? "-" : "");
    for (const auto& m : ms) printf(" %.4f", m[k]);
    printf(" name %s\n", names[k].c_str());
  }
  printf("profile: work ms");
  for (const auto& m : ms) {
    double w = 0;
    for (double t : m) w += t;
    printf(" %.4f", w);
  }
  printf("\nprofile: span ms");
  for (const auto& m : ms) {
    std::vector<double> finish(m.size(), 0.0);  // ops are in topological order
    double span = 0;
    for (size_t k = 0; k < m.size(); ++k) {
      double start = 0;
      for (int p : preds[k]) start = std::max(start, finish[static_cast<size_t>(p)]);
      finish[k] = start + m[k];
      span = std::max(span, finish[k]);
    }
    printf(" %.4f", span);
  }
  printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  bool want_profile = false;
  std::vector<int> teams;
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
    if (!strcmp(argv[i], "--profile")) {
      want_profile = true;
      continue;
    }
    if (!strcmp(argv[i], "--profile-threads")) {
      teams.clear();
      if (i + 1 >= argc || !parse_threads(argv[i + 1], &teams)) {
        fprintf(stderr, "parwidth-engine: error: --profile-threads wants a list like 1,2,4\n");
        return 2;
      }
      want_profile = true;
      ++i;
      continue;
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
  const Settings st{iterations, warmup, batch, hw, inter, intra, seed};
  if (want_profile) {
    if (teams.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
      for (int t = 1; t <= std::max(1, cpus); ++t) teams.push_back(t);
    }
    return profile(bytes, st, teams, path);
  }
  char err[512];
  pwe_session* s = open_session(bytes, st, path);
  if (!s) return 2;
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
