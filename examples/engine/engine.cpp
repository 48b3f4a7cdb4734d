// examples/engine/engine: libpwengine's C API (pwengine.h): session options, sessions
// (loaded, built on a thread of their own, then run by their workers) and their results.
// Built like TensorFlow's direct session: the options say how many inter-op workers run
// ready operators concurrently and how many OpenMP threads each operator uses (each
// worker sets its own team size, as TF's MKL path does per op); 0 means the naive
// defaults, every logical CPU for both.
#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "examples/engine/session.h"

struct pwe_session_options {
  int inter = 0, intra = 0, batch = 0, image_size = 0;
  uint64_t seed = 1;
};

namespace {

void err_set(char* err, size_t len, const std::string& msg) {
  if (!err || !len) return;
  snprintf(err, len, "%s", msg.c_str());
}

int logical_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

}  // namespace

extern "C" {

pwe_session_options* pwe_session_options_new(void) {
  return new (std::nothrow) pwe_session_options();
}
void pwe_session_options_free(pwe_session_options* o) {
  delete o;
}
void pwe_session_options_set_inter_op_threads(pwe_session_options* o, int n) {
  if (o) o->inter = n < 0 ? 0 : n;
}
void pwe_session_options_set_intra_op_threads(pwe_session_options* o, int n) {
  if (o) o->intra = n < 0 ? 0 : n;
}
int pwe_session_options_get_inter_op_threads(const pwe_session_options* o) {
  return o ? o->inter : 0;
}
int pwe_session_options_get_intra_op_threads(const pwe_session_options* o) {
  return o ? o->intra : 0;
}
void pwe_session_options_set_batch(pwe_session_options* o, int b) {
  if (o) o->batch = b < 0 ? 0 : b;
}
int pwe_session_options_get_batch(const pwe_session_options* o) {
  return o ? o->batch : 0;
}
int pwe_session_options_get_image_size(const pwe_session_options* o) {
  return o ? o->image_size : 0;
}
void pwe_session_options_set_image_size(pwe_session_options* o, int hw) {
  if (o) o->image_size = hw < 0 ? 0 : hw;
}
void pwe_session_options_set_seed(pwe_session_options* o, uint64_t seed) {
  if (o) o->seed = seed;
}

pwe_session* pwe_session_new(const void* model, size_t size, pwe_session_options* opts, char* err,
                             size_t errlen) {
  if (!model || !size) {
    err_set(err, errlen, "empty model");
    return nullptr;
  }
  pwe_session_options defaults;
  const pwe_session_options& o = opts ? *opts : defaults;
  std::unique_ptr<pwe_session> s;
  std::string e;
  bool ok = false;
  try {
    s.reset(new pwe_session());
    s->bytes.assign(static_cast<const char*>(model), size);
    const int cpus = logical_cpus();
    s->inter = o.inter > 0 ? o.inter : cpus;
    s->intra = o.intra > 0 ? o.intra : cpus;
    pwe::LoadOptions lo;
    lo.batch = o.batch;
    lo.image_size = o.image_size;
    lo.seed = o.seed;
    if (pwe::model_load_bytes(s->bytes.data(), s->bytes.size(), lo, &s->model, &e)) {
      // Primitives are created, and constants reordered, with the team size they
      // will run with (oneDNN's OpenMP runtime sizes kernels from
      // omp_get_max_threads at creation), on a thread of their own that ends
      // with the build. Built on the caller, the reorders' parallel regions
      // would leave the caller an idle OpenMP team for the session's life, and
      // libgomp, once it manages more threads than CPUs, stops letting every
      // team's workers spin between regions: each operator of each inter-op
      // worker would then wake its team through the kernel. Frameworks build
      // and run their kernels on their pool threads; the caller keeps no team.
      // What the build throws is rethrown here, to the handlers below.
      std::exception_ptr thrown;
      std::thread builder([raw = s.get(), &o, &ok, &e, &thrown] {
        try {
          omp_set_num_threads(raw->intra);
          ok = raw->build(o.seed, &e);
        } catch (...) {
          thrown = std::current_exception();
        }
      });
      builder.join();
      if (thrown) std::rethrow_exception(thrown);
      if (ok) {
        for (int k = 0; k < s->inter; ++k) s->workers.emplace_back([p = s.get()] { p->worker(); });
      }
    }
  } catch (const dnnl::error& ex) {
    e = std::string("oneDNN: ") + ex.what();
    ok = false;
  } catch (const std::exception& ex) {
    e = ex.what();
    ok = false;
  }
  if (!ok) {
    err_set(err, errlen, e);
    return nullptr;
  }
  return s.release();
}

void pwe_session_free(pwe_session* s) {
  delete s;
}
int pwe_session_inter_op_threads(const pwe_session* s) {
  return s ? s->inter : 0;
}
int pwe_session_intra_op_threads(const pwe_session* s) {
  return s ? s->intra : 0;
}

const void* pwe_session_graph(const pwe_session* s, size_t* size) {
  if (!s) return nullptr;
  if (size) *size = s->bytes.size();
  return s->bytes.data();
}

int pwe_session_num_inputs(const pwe_session* s) {
  return s ? static_cast<int>(s->model.inputs.size()) : -1;
}

int pwe_session_set_input(pwe_session* s, int i, const float* data, size_t count) {
  if (!s || i < 0 || i >= pwe_session_num_inputs(s) || !data) return -1;
  std::vector<float>& b = s->buf[static_cast<size_t>(i)];
  if (count != b.size()) return -1;
  memcpy(b.data(), data, count * sizeof(float));
  return 0;
}

int pwe_session_run(pwe_session* s, char* err, size_t errlen) {
  if (!s) return -1;
  std::string e;
  bool ok = false;
  try {
    ok = s->run(&e);
  } catch (const std::exception& ex) {
    e = ex.what();
  }
  if (!ok) err_set(err, errlen, e);
  return ok ? 0 : -1;
}

int pwe_session_num_outputs(const pwe_session* s) {
  return s ? static_cast<int>(s->outputs.size()) : -1;
}

int pwe_session_output(const pwe_session* s, int i, const float** data, size_t* count, int* rank,
                       int64_t* dims) {
  if (!s || i < 0 || i >= pwe_session_num_outputs(s)) return -1;
  const size_t t = static_cast<size_t>(s->outputs[static_cast<size_t>(i)]);
  const auto& d = s->model.tensor_dims[t];
  if (data) *data = s->buf[t].data();
  if (count) *count = s->buf[t].size();
  if (rank) *rank = static_cast<int>(d.size());
  if (dims)
    for (size_t k = 0; k < d.size() && k < 8; ++k) dims[k] = d[k];
  return 0;
}

void pwe_session_set_profiling(pwe_session* s, int on) {
  if (s) s->profiling = on != 0;
}

int pwe_session_num_ops(const pwe_session* s) {
  return s ? static_cast<int>(s->model.ops.size()) : -1;
}

int pwe_session_op(const pwe_session* s, int i, const char** name, const char** type,
                   const int** preds, int* npreds, double* ms) {
  if (!s || i < 0 || i >= pwe_session_num_ops(s)) return -1;
  const pwe::Op& op = s->model.ops[static_cast<size_t>(i)];
  if (name) *name = op.name.c_str();
  if (type) *type = op.type.c_str();
  if (preds) *preds = op.preds.data();
  if (npreds) *npreds = static_cast<int>(op.preds.size());
  if (ms) *ms = s->op_ms[static_cast<size_t>(i)];
  return 0;
}

const char* pwe_version(void) {
  static char v[64];
  const dnnl_version_t* d = dnnl_version();
  snprintf(v, sizeof v, "oneDNN %d.%d.%d (cpu runtime: %s)", d->major, d->minor, d->patch,
           d->cpu_runtime == DNNL_RUNTIME_OMP   ? "omp"
           : d->cpu_runtime == DNNL_RUNTIME_TBB ? "tbb"
                                                : "other");
  return v;
}

}  // extern "C"
