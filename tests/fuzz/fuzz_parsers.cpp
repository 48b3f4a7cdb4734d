// libFuzzer targets for the parsers that read outside input (PW_FUZZ_PARSER
// picks which): PARWIDTH_* options, cgroup files, cpu lists, calibration
// cache files and node registry entries. Each parses, and where the parser
// has a writer, writes the result and parses that again: it must read back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/node.h"
#include "core/options.h"
#include "governor/machine_model.h"
#include "topology/internal.h"
#include "topology/topology.h"

namespace {

// The input split at NUL bytes into up to n strings (missing ones empty).
std::vector<std::string> parts(const uint8_t* data, size_t size, size_t n) {
  std::vector<std::string> v(n);
  size_t k = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && k + 1 < n) {
      ++k;
      continue;
    }
    v[k].push_back(static_cast<char>(data[i]));
  }
  return v;
}

void fail(const char* what) {
  fprintf(stderr, "fuzz: %s\n", what);
  abort();
}

void options(const uint8_t* data, size_t size) {
  // NAME=VALUE lines; names are matched as given (PARWIDTH_MODE=...).
  std::vector<std::pair<std::string, std::string>> env;
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t i = 0;
  while (i <= text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string::npos) e = text.size();
    const std::string line = text.substr(i, e - i);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    i = e + 1;
  }
  const pw::opt::EnvLookup lookup = [&env](const char* name) -> const char* {
    for (const auto& [k, v] : env)
      if (k == name) return v.c_str();
    return nullptr;
  };
  std::vector<std::string> warnings;
  const pw::opt::Options o = pw::opt::options_parse(lookup, &warnings);
  (void)pw::opt::options_describe(o);
  (void)pw::opt::process_selected(o, {"python3", "python3.11"});
  if (!env.empty()) (void)pw::opt::patterns_match(env[0].second, {"a", "python*"});
}

void cpulist(const uint8_t* data, size_t size) {
  std::vector<int> cpus;
  std::string err;
  if (pw::topo::cpulist_parse(std::string(reinterpret_cast<const char*>(data), size), &cpus,
                              &err) != pw::topo::Status::kOk)
    return;
  std::vector<int> again;
  if (pw::topo::cpulist_parse(pw::topo::cpulist_format(cpus), &again, &err) !=
          pw::topo::Status::kOk ||
      again != cpus)
    fail("cpulist_format does not read back");
}

void cgroup(const uint8_t* data, size_t size) {
  // /proc/self/cgroup, /proc/self/mountinfo, a cpu.max.
  const std::vector<std::string> p = parts(data, size, 3);
  std::string dir, mount, err;
  (void)pw::topo::internal::cgroup_dir_from(p[0], p[1], &dir, &err);
  (void)pw::topo::internal::cgroup_v1_cpu_dir_from(p[0], p[1], &dir, &mount, &err);
  double cpus = 0;
  if (pw::topo::internal::cpu_max_parse(p[2], &cpus, &err) == pw::topo::Status::kOk && !(cpus >= 0))
    fail("cpu_max_parse gave a negative or NaN count");
  (void)pw::topo::internal::mount_unescape(p[2]);
}

void calibration(const uint8_t* data, size_t size) {
  // A cache file, then the machine and budget it is checked against.
  const std::vector<std::string> p = parts(data, size, 3);
  pw::gov::Calibration c;
  std::string why;
  if (pw::gov::calibration_parse(p[0], p[1], p[2], 1700000000, &c, &why) != pw::Status::kOk) return;
  pw::gov::Calibration again;
  if (pw::gov::calibration_parse(pw::gov::calibration_format(c), p[1], p[2], 1700000000, &again,
                                 &why) != pw::Status::kOk)
    fail("calibration_format does not read back");
}

void node_entry(const uint8_t* data, size_t size) {
  pw::gov::NodeMember m;
  if (!pw::node::entry_parse(std::string(reinterpret_cast<const char*>(data), size), &m)) return;
  pw::gov::NodeMember again;
  if (!pw::node::entry_parse(pw::node::entry_format(m), &again))
    fail("entry_format does not read back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  PW_FUZZ_PARSER(data, size);
  return 0;
}
