// l2_cache_per_core: the level-2 cache one physical core has, from sysfs.
#include <cstdlib>
#include <string>
#include <vector>

#include "topology/internal.h"
#include "topology/topology.h"

namespace pw::topo {
namespace {

// "2048K", "1M", "524288": bytes; -1 when malformed.
int64_t size_parse(const std::string& text) {
  const std::string t = internal::trim(text);
  if (t.empty()) return -1;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (end == t.c_str() || v <= 0 || v > (1LL << 40)) return -1;
  const std::string unit = end;
  if (unit.empty()) return v;
  if (unit == "K") return v << 10;
  if (unit == "M") return v << 20;
  if (unit == "G" && v < 1024) return v << 30;
  return -1;
}

int list_count(const std::string& text) {
  std::vector<int> cpus;
  if (cpulist_parse(internal::trim(text), &cpus, nullptr) != Status::kOk) return -1;
  return static_cast<int>(cpus.size());
}

}  // namespace

Status l2_cache_per_core(const std::string& root, int cpu, int64_t* bytes, std::string* err) {
  const std::string dir = root + "/cpu" + std::to_string(cpu);
  // Hardware threads of this core: an L2 that they alone share is the core's own.
  std::string text;
  int siblings = 1;
  if (internal::file_read(dir + "/topology/thread_siblings_list", &text, nullptr) == Status::kOk) {
    const int n = list_count(text);
    if (n > 0) siblings = n;
  }
  for (int k = 0; k < 16; ++k) {
    const std::string index = dir + "/cache/index" + std::to_string(k);
    std::string level, type, size;
    if (internal::file_read(index + "/level", &level, nullptr) != Status::kOk) continue;
    if (internal::trim(level) != "2") continue;
    if (internal::file_read(index + "/type", &type, nullptr) == Status::kOk &&
        internal::trim(type) == "Instruction")
      continue;
    if (internal::file_read(index + "/size", &size, nullptr) != Status::kOk) continue;
    const int64_t b = size_parse(size);
    if (b < 0) {
      internal::err_set(err, index + "/size: '" + internal::one_line(size) + "'");
      return Status::kInvalid;
    }
    // A cache shared by several cores (some Arm and Atom clusters): this core's share.
    int cores = 1;
    std::string shared;
    if (internal::file_read(index + "/shared_cpu_list", &shared, nullptr) == Status::kOk) {
      const int pus = list_count(shared);
      if (pus > siblings) cores = (pus + siblings - 1) / siblings;
    }
    *bytes = b / cores;
    return Status::kOk;
  }
  internal::err_set(err, dir + "/cache: no level-2 data cache listed");
  return Status::kUnsupported;
}

}  // namespace pw::topo
