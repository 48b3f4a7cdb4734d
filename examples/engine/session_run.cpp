// examples/engine/session_run: the inter-op scheduler. Built like TensorFlow's direct
// session: `inter` workers take ready operators in the order they became ready, each with
// its own OpenMP team of `intra` threads for the operators it runs.
#include <omp.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <exception>

#include "examples/engine/session.h"

pwe_session::~pwe_session() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  work_cv.notify_all();
  for (std::thread& t : workers) t.join();
}

void pwe_session::run_op(int i, dnnl::stream& strm) {
  Exec& e = ops[static_cast<size_t>(i)];
  if (e.kind == Exec::kPrimitive) {
    e.prim.execute(strm, e.args);
    strm.wait();
  } else if (e.kind == Exec::kCopy) {
    memcpy(e.dst, e.src, static_cast<size_t>(e.count) * sizeof(float));
  } else if (e.kind == Exec::kPad) {
    const std::vector<int64_t>& d = e.in_dims;
    const std::vector<int64_t>& p = e.pads;
    const int64_t oc = d[1] + p[1] + p[5], oh = d[2] + p[2] + p[6], ow = d[3] + p[3] + p[7];
    const float* src = e.src;
    float* dst = e.dst;
    memset(dst, 0, static_cast<size_t>(e.count) * sizeof(float));
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < d[0]; ++n)
      for (int64_t c = 0; c < d[1]; ++c)
        for (int64_t h = 0; h < d[2]; ++h)
          memcpy(dst + (((n + p[0]) * oc + c + p[1]) * oh + h + p[2]) * ow + p[3],
                 src + ((n * d[1] + c) * d[2] + h) * d[3],
                 static_cast<size_t>(d[3]) * sizeof(float));
  } else {
    e.fn();
  }
}

// Where the session's operators run on one thread each, an idle worker and
// the waiting caller poll for up to kSpinUs, yielding the core at each poll,
// before they sleep on a condition variable (Eigen's thread pool, under
// TensorFlow's inter-op workers, and ONNX Runtime's also spin before they
// block). A thread that slept on an idle core and is woken from another costs
// its waker an inter-processor interrupt (in a virtual machine, an exit to
// the hypervisor: 30-60 us measured on KVM guests), once per hand-off; on a
// graph of tens of microseconds that was most of an iteration, and whether
// the scheduler had put the caller beside the worker decided it, run by run.
// Yielding lets a thread that shares the core (the caller beside a worker)
// run. Teams of two or more threads do not poll: libgomp's workers spin
// between regions and keep the cores awake themselves, without yielding, and
// a thread that yielded to one would wait for a time slice.
template <typename Done>
void pwe_session::spin_until(Done done) const {
  if (intra > 1) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinUs);
  while (!done() && std::chrono::steady_clock::now() < until) sched_yield();
}

void pwe_session::worker() {
  // The intra-op team of every operator this worker runs: OpenMP's team size is
  // a per-thread setting, so each worker sets its own.
  omp_set_num_threads(intra);
  dnnl::stream strm(eng);
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    if (!stop && ready.empty()) {
      lock.unlock();
      spin_until([&] { return stop.load() || queued.load() > 0; });
      lock.lock();
    }
    work_cv.wait(lock, [&] { return stop || !ready.empty(); });
    if (stop) return;
    const int i = ready.front();
    ready.pop_front();
    queued = ready.size();
    lock.unlock();
    std::string failure;
    try {
      const auto t0 = std::chrono::steady_clock::now();
      run_op(i, strm);
      if (profiling)
        op_ms[static_cast<size_t>(i)] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
    } catch (const std::exception& ex) {
      failure = "op " + model.ops[static_cast<size_t>(i)].name + ": " + ex.what();
    }
    lock.lock();
    if (!failure.empty() && error.empty()) error = failure;
    size_t woken = 0;
    for (int s : ops[static_cast<size_t>(i)].succ)
      if (--pending[static_cast<size_t>(s)] == 0) ready.push_back(s), ++woken;
    queued = ready.size();
    if (woken > 1)
      work_cv.notify_all();
    else if (woken == 1)
      work_cv.notify_one();
    if (--remaining == 0) done_cv.notify_all();
  }
}

bool pwe_session::run(std::string* err) {
  std::unique_lock<std::mutex> lock(mu);
  error.clear();
  pending.assign(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    for (int s : ops[i].succ) ++pending[static_cast<size_t>(s)];
  remaining = ops.size();
  for (size_t i = 0; i < ops.size(); ++i)
    if (!pending[i]) ready.push_back(static_cast<int>(i));
  queued = ready.size();
  work_cv.notify_all();
  lock.unlock();
  spin_until([&] { return remaining.load() == 0; });
  lock.lock();
  done_cv.wait(lock, [&] { return remaining == 0; });
  if (!error.empty()) {
    *err = error;
    return false;
  }
  return true;
}
