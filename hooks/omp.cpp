// hooks/omp: OpenMP team caps. Each thread's nthreads ICV is set to the plan's
// threads per pool before its first parallel region (and again when the cap
// changes), as if OMP_NUM_THREADS had been set for it: the default team size
// and what omp_get_max_threads reports stay consistent, and an explicit
// num_threads clause is left to the programmer. Works whether the runtime
// read its environment before our constructor (linked in) or not (dlopen'ed).
#include "hooks/omp.h"

#include <dlfcn.h>

#include <cstdlib>

#include "hooks/guard.h"
#include "hooks/slots.h"
#include "preload/runtime.h"

namespace pw::hooks {
namespace {

// Per thread: the cap generation already applied, and whether the program
// set this thread's team size itself.
thread_local unsigned t_applied_gen __attribute__((tls_model("initial-exec"))) = 0;
thread_local bool t_user_set __attribute__((tls_model("initial-exec"))) = false;

// Whether libomp's own binding is to be turned off (decided at activation).
std::atomic<bool> g_libomp_binding_off{false};
// kmp_set_defaults of each libomp runtime already told (a process may carry a
// system libomp and a wheel's private copy).
constexpr int kRuntimes = 4;
std::atomic<void*> g_libomp_told[kRuntimes];
RealSlot g_kmp_set_defaults{"kmp_set_defaults", nullptr, false};

// Turns off the binding of the libomp that the caller uses, once per runtime,
// before its first parallel region binds anything.
void libomp_binding_off(const void* caller_pc) {
  if (!g_libomp_binding_off.load(std::memory_order_relaxed)) return;
  void* fn = real_for_caller(&g_kmp_set_defaults, caller_pc);
  if (!fn) return;  // libgomp binds nothing unless asked
  for (std::atomic<void*>& slot : g_libomp_told) {
    void* seen = slot.load(std::memory_order_acquire);
    if (seen == fn) return;
    if (seen == nullptr) {
      if (!slot.compare_exchange_strong(seen, fn)) {
        if (seen == fn) return;
        continue;
      }
      reinterpret_cast<void (*)(const char*)>(fn)("KMP_AFFINITY=disabled");
      rt::note_framework("libomp", "KMP_AFFINITY (kmp_set_defaults)", "disabled", true,
                         "libomp would bind every thread to the first pinned thread's core");
      return;
    }
  }
}

}  // namespace

void omp_before_region(const void* caller_pc) {
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return;
  const unsigned gen = rt::omp_generation();
  if (t_applied_gen == gen) return;
  t_applied_gen = gen;
  libomp_binding_off(caller_pc);
  const int cap = rt::omp_cap();
  if (cap <= 0 || (t_user_set && !rt::options().override_user)) return;
  // The runtime the caller uses (a wheel may bundle its own libgomp).
  auto set = reinterpret_cast<PW_HOOK_TYPE(omp_set_num_threads)>(
      real_for_caller(&PW_REAL_SLOT(omp_set_num_threads), caller_pc));
  if (set) set(cap);
}

void omp_on_activate() {
  if (!rt::governing() || rt::pin_mode() == opt::Pin::kNone) return;
  for (const char* v : {"KMP_AFFINITY", "OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) {
    if (const char* val = getenv(v)) {
      rt::note_framework("openmp", v, val, false,
                         "thread binding chosen by the user; kept (parwidth still pins)");
      return;
    }
  }
  g_libomp_binding_off.store(true, std::memory_order_relaxed);
  // A libomp linked into the program: before any thread of it can run a region.
  libomp_binding_off(reinterpret_cast<const void*>(&omp_on_activate));
}

}  // namespace pw::hooks

using pw::hooks::omp_before_region;

PW_HOOK(void, omp_set_num_threads, (int n)) {
  auto real = PW_REAL(omp_set_num_threads);
  if (!real) return;
  if (pw::rt::selected() && pw::rt::ensure_active()) {
    bool user = true;
    pw::hooks::framework_sets_omp_threads(__builtin_return_address(0), &user);
    pw::hooks::t_user_set = user;
    // With PARWIDTH_OVERRIDE=1 the plan's cap wins over the program's own call.
    const int cap = pw::rt::omp_cap();
    if (cap > 0 && n > cap && pw::rt::options().override_user) n = cap;
    pw::hooks::t_applied_gen = pw::rt::omp_generation();
  }
  real(n);
}

PW_HOOK(int, omp_get_max_threads, (void)) {
  omp_before_region(__builtin_return_address(0));
  auto real = PW_REAL(omp_get_max_threads);
  return real ? real() : 1;
}

// Initialises libomp's affinity machinery (MKL's Intel threading layer asks
// it before its first region): its binding must be turned off first, or the
// runtime ignores the change and warns on the program's stderr.
PW_HOOK(int, omp_get_num_procs, (void)) {
  omp_before_region(__builtin_return_address(0));
  auto real = PW_REAL(omp_get_num_procs);
  return real ? real() : 1;
}

// The compiler-facing entry points: apply the cap, then the original, unchanged.
#define PW_GOMP_HOOK(name, params, args)            \
  PW_HOOK(void, name, params) {                     \
    omp_before_region(__builtin_return_address(0)); \
    PW_REAL(name) args;                             \
  }

PW_GOMP_HOOK(GOMP_parallel, (void (*fn)(void*), void* data, unsigned n, unsigned flags),
             (fn, data, n, flags))
PW_GOMP_HOOK(GOMP_parallel_start, (void (*fn)(void*), void* data, unsigned n), (fn, data, n))
PW_GOMP_HOOK(GOMP_parallel_sections,
             (void (*fn)(void*), void* data, unsigned n, unsigned count, unsigned flags),
             (fn, data, n, count, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_static,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, long k,
              unsigned flags),
             (fn, data, n, a, b, c, k, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_dynamic,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, long k,
              unsigned flags),
             (fn, data, n, a, b, c, k, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_guided,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, long k,
              unsigned flags),
             (fn, data, n, a, b, c, k, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_nonmonotonic_dynamic,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, long k,
              unsigned flags),
             (fn, data, n, a, b, c, k, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_nonmonotonic_guided,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, long k,
              unsigned flags),
             (fn, data, n, a, b, c, k, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_runtime,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, unsigned flags),
             (fn, data, n, a, b, c, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_nonmonotonic_runtime,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, unsigned flags),
             (fn, data, n, a, b, c, flags))
PW_GOMP_HOOK(GOMP_parallel_loop_maybe_nonmonotonic_runtime,
             (void (*fn)(void*), void* data, unsigned n, long a, long b, long c, unsigned flags),
             (fn, data, n, a, b, c, flags))

PW_HOOK(unsigned, GOMP_parallel_reductions,
        (void (*fn)(void*), void* data, unsigned n, unsigned flags)) {
  omp_before_region(__builtin_return_address(0));
  return PW_REAL(GOMP_parallel_reductions)(fn, data, n, flags);
}
