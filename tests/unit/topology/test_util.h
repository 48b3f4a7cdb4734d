// Helpers shared by the topology tests: fixture paths and flattened views of results.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace pw::topo::test {

inline std::string fixture(const std::string& rel) {
  return std::string(PW_SOURCE_DIR) + "/tests/fixtures/" + rel;
}

using CoreList = std::vector<std::vector<int>>;

// Cores in socket-major order, each as its PU list.
template <typename T>
CoreList cores_of(const T& with_sockets) {
  CoreList r;
  for (const Socket& s : with_sockets.sockets) {
    for (const Core& c : s.cores) r.push_back(c.pus);
  }
  return r;
}

inline std::vector<int> range(int lo, int hi) {  // [lo, hi]
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

inline Machine load(const std::string& spec) {
  Machine m;
  std::string err;
  if (machine_load(spec, &m, &err) != Status::kOk) m.source = "FAILED: " + err;
  return m;
}

}  // namespace pw::topo::test
