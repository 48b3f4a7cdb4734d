// examples/engine/session: a session's state, shared by the C API (engine.cpp), the build
// of its operators (session_build.cpp) and the inter-op scheduler that runs them
// (session_run.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "dnnl.hpp"
#include "examples/engine/model.h"
#include "examples/engine/pwengine.h"

namespace pwe {

// One operator ready to run: a oneDNN primitive with its arguments, a copy (Flatten,
// Reshape, Identity, ...), or a plain loop (examples/engine/kernels) in fn.
struct Exec {
  enum Kind { kPrimitive, kCopy, kFn, kPad } kind = kPrimitive;
  dnnl::primitive prim;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::memory scratch;
  std::function<void()> fn;
  const float* src = nullptr;  // copy / pad
  float* dst = nullptr;
  int64_t count = 0;
  std::vector<int64_t> in_dims, pads;  // pad (4-D)
  std::vector<int> succ;
};

}  // namespace pwe

struct pwe_session {
  using Exec = pwe::Exec;
  using memory = dnnl::memory;

  std::string bytes;
  int inter = 1, intra = 1;
  pwe::Model model;
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  std::vector<std::vector<float>> buf;  // per tensor in model.tensor_names
  std::vector<memory> mem;
  std::vector<memory> weights;  // reordered constants, kept alive
  std::vector<Exec> ops;
  std::vector<int> outputs;  // tensor indices
  bool profiling = false;
  std::vector<double> op_ms;  // the last run's time per op, when profiling

  // Scheduler state.
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::deque<int> ready;
  std::vector<int> pending;
  // Written under mu; read without it by threads that spin before they sleep.
  std::atomic<size_t> queued{0};  // ready.size()
  std::atomic<size_t> remaining{0};
  std::atomic<bool> stop{false};
  std::string error;
  std::vector<std::thread> workers;

  // The scheduler (session_run.cpp).
  ~pwe_session();
  void run_op(int i, dnnl::stream& strm);
  template <typename Done>
  void spin_until(Done done) const;
  static constexpr int kSpinUs = 200;
  void worker();
  bool run(std::string* err);

  // The operators' primitives, built once (session_build.cpp).
  memory const_memory(const std::string& name, const memory::desc& want);
  memory::desc md(int t) const;
  void finish(Exec* e, const dnnl::primitive_desc_base& pd);
  const float* ptr(const std::string& n) const;
  const std::vector<int64_t>& dims(const std::string& n) const;
  memory view(const std::string& n, const std::vector<int64_t>& d);
  void eltwise(Exec* e, const dnnl::primitive_attr& attr, const pwe::Op& op, dnnl::algorithm alg,
               float alpha, float beta);
  void binary(Exec* e, const dnnl::primitive_attr& attr, const pwe::Op& op);
  void matmul(Exec* e, const pwe::Op& op);
  bool build(uint64_t seed, std::string* err);
};
