// hooks/omp: OpenMP team caps. Each thread's nthreads ICV is set to the plan's
// threads per pool before its first parallel region (and again when the cap
// changes, unless the program compiles with torch.compile: governor/pools_omp's
// omp_team_resize), as if OMP_NUM_THREADS had been set for it: the default
// team size and what omp_get_max_threads reports stay consistent, and an
// explicit num_threads clause is left to the programmer. Where an MKL is
// loaded, the thread's MKL count follows the same value (omp_team_reaches_mkl). Works whether the
// runtime read its environment before our constructor (linked in) or not (dlopen'ed).
#include "hooks/omp.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "governor/pin.h"
#include "governor/pools_omp.h"
#include "governor/pools_wait.h"
#include "hooks/blas.h"
#include "hooks/guard.h"
#include "hooks/imports.h"
#include "hooks/pools.h"
#include "hooks/slots.h"
#include "runtime/api.h"
#include "topology/affinity.h"

namespace pw::hooks {
namespace {

// The blocktime (ms) every master thread of an LLVM or Intel runtime gives its
// teams (decided at activation; -1: left as it is).
std::atomic<long> g_blocktime{-1};

// Per thread: the cap generation already applied, and whether the program
// set this thread's team size itself.
thread_local unsigned t_applied_gen __attribute__((tls_model("initial-exec"))) = 0;
thread_local bool t_user_set __attribute__((tls_model("initial-exec"))) = false;

// Whose binding the OpenMP runtimes' threads follow (governor/pools_omp,
// decided at activation), and whether libomp keeps its own (decided then, or
// at its first sight).
std::atomic<gov::OmpBinding> g_binding{gov::OmpBinding::kNone};
std::atomic<bool> g_libomp_own_binding{false};
// kmp_set_defaults of each libomp runtime already told (a process may carry a
// system libomp and a wheel's private copy).
constexpr int kRuntimes = 4;
std::atomic<void*> g_libomp_told[kRuntimes];

// The OpenMP API that reads a thread's affinity or the places: with
// KMP_AFFINITY=disabled libomp 14 aborts in omp_display_affinity /
// omp_capture_affinity (its affinity mask is null) and reports no places.
const char* const kAffinityApi[] = {"omp_display_affinity",
                                    "omp_display_affinity_",
                                    "omp_capture_affinity",
                                    "omp_capture_affinity_",
                                    "ompc_display_affinity",
                                    "ompc_capture_affinity",  // libomp's omp.h
                                    "omp_get_num_places",
                                    "omp_get_num_places_",
                                    "omp_get_place_num_procs",
                                    "omp_get_place_num_procs_",
                                    "omp_get_place_proc_ids",
                                    "omp_get_place_proc_ids_",
                                    "omp_get_place_num",
                                    "omp_get_place_num_",
                                    "omp_get_partition_num_places",
                                    "omp_get_partition_num_places_",
                                    "omp_get_partition_place_nums",
                                    "omp_get_partition_place_nums_",
                                    "kmp_get_affinity",
                                    "kmp_set_affinity",
                                    "kmp_get_affinity_max_proc",
                                    "kmp_get_affinity_mask_proc"};

// Which runtime a kmp_set_defaults belongs to. Intel's (libiomp5) and LLVM's
// (libomp) share an ABI and most code, but not this: LLVM's accepts a
// KMP_AFFINITY in any call made before its middle initialisation, while
// Intel's takes it from the first call only (a later one is "too late").
// Each carries its brand in the version text it prints for KMP_VERSION, "@(#)
// Intel(R) OMP ..." or "@(#) LLVM OMP ...", which a renamed copy (a wheel's)
// keeps, unlike its file name or soname.
enum class OmpVendor { kUnknown, kLlvm, kIntel };

struct ReadOnlySegments {
  const void* fn = nullptr;
  int n = 0;
  const char* start[8] = {};
  size_t size[8] = {};
};

OmpVendor omp_vendor_of(const void* fn) {
  ReadOnlySegments segs;
  segs.fn = fn;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<ReadOnlySegments*>(data);
        const auto pc = reinterpret_cast<ElfW(Addr)>(s->fn);
        bool mine = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const ElfW(Addr) at = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && pc >= at && pc < at + ph.p_memsz) mine = true;
        }
        if (!mine) return 0;
        for (int i = 0; i < info->dlpi_phnum && s->n < 8; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_R) || (ph.p_flags & PF_W)) continue;
          s->start[s->n] = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          s->size[s->n++] = ph.p_filesz;
        }
        return 1;
      },
      &segs);
  static const char kIntel[] = "@(#) Intel(R) OMP ";
  static const char kLlvm[] = "@(#) LLVM OMP ";
  // A runtime's own object is a few MiB; a large program with a runtime
  // linked in statically is not searched (unknown: LLVM's sequence).
  constexpr size_t kMaxSearched = size_t{64} << 20;
  for (int i = 0; i < segs.n; ++i) {
    if (segs.size[i] > kMaxSearched) return OmpVendor::kUnknown;
    if (memmem(segs.start[i], segs.size[i], kIntel, sizeof kIntel - 1)) return OmpVendor::kIntel;
    if (memmem(segs.start[i], segs.size[i], kLlvm, sizeof kLlvm - 1)) return OmpVendor::kLlvm;
  }
  return OmpVendor::kUnknown;
}

// KMP_AFFINITY=disabled through kmp_set_defaults, in the form each runtime
// takes. A runtime whose affinity is already initialised ignores the setting
// and warns on the program's stderr. Returns false when the runtime is known
// to have ignored it (its own binding stands).
//  - LLVM's is initialised by tasks, a teams region or omp_get_num_procs()
//    before the first parallel region (the hooks see the last two first).
//    The warnings are off for that one call and then back to the user's
//    KMP_WARNINGS (or on, libomp's default): silent either way.
//  - Intel's takes KMP_AFFINITY from its first kmp_set_defaults only (any
//    call initialises it, so a KMP_WARNINGS=false before would make the
//    setting too late), and also counts omp_get_level() and tasks as a first
//    use: one call with the setting alone. Initialised by then, it warns
//    ("OMP: Warning #226") and keeps its binding. Its kmp_set_defaults has
//    initialised its affinity either way, so kmp_get_affinity_max_proc()
//    (0 once affinity is disabled) tells which, at no further cost.
void llvm_disable(void (*set)(const char*)) {
  const char* user = getenv("KMP_WARNINGS");
  char restore[64] = "KMP_WARNINGS=true";
  if (user && *user && strlen(user) < sizeof restore - 16)
    snprintf(restore, sizeof restore, "KMP_WARNINGS=%s", user);
  set("KMP_WARNINGS=false");
  set("KMP_AFFINITY=disabled");
  set(restore);
}

// LLVM's runtimes whose affinity kmp_set_defaults turned off.
std::atomic<void*> g_llvm_disabled[kRuntimes];
std::atomic<bool> g_llvm_child_handler{false};

// In a fork child, after libomp's own fork handler. That handler sets the
// child's affinity type back to "none", and the child's next OpenMP call
// re-detects the mask size, but the masks the parent allocated while affinity
// was off (zero bytes) are kept and filled at the full size: libomp 14 writes
// past a heap block there, and the child aborts in free() later (seen as
// "free(): invalid pointer" from a child that only ran a serialized region).
// Turned off again at once, the child re-initialises consistently, and its
// runtime binds nothing, as the parent's did.
void llvm_disable_in_child() {
  for (std::atomic<void*>& slot : g_llvm_disabled)
    if (void* fn = slot.load(std::memory_order_acquire))
      llvm_disable(reinterpret_cast<void (*)(const char*)>(fn));
}

// Remembers an LLVM runtime turned off; the first one registers the child
// handler, after libomp's own (its kmp_set_defaults initialised it, and
// libomp registers its handler then): fork handlers of children run in the
// order they were registered.
void llvm_disabled_note(void* fn) {
  for (std::atomic<void*>& slot : g_llvm_disabled) {
    void* seen = nullptr;
    if (slot.compare_exchange_strong(seen, fn) || seen == fn) break;
  }
  if (!g_llvm_child_handler.exchange(true)) pthread_atfork(nullptr, nullptr, llvm_disable_in_child);
}

bool libomp_disable(void* fn, OmpVendor vendor, const void* caller_pc) {
  auto set = reinterpret_cast<void (*)(const char*)>(fn);
  if (vendor == OmpVendor::kIntel) {
    set("KMP_AFFINITY=disabled");
    // Found as kmp_set_defaults was (the same caller): the same runtime's.
    auto max_proc = PW_REAL_AT(kmp_get_affinity_max_proc, caller_pc);
    return !max_proc || max_proc() == 0;
  }
  llvm_disable(set);
  llvm_disabled_note(fn);
  return true;
}

// libomp takes its "full" CPU set from the thread that initialises its
// affinity, and binds its threads inside it. When that thread is one we
// pinned, libomp is initialised here with the thread's mask widened to the
// process's set for the moment (as it would be without us), then put back.
void libomp_init_wide(const void* caller_pc) {
  // governor/pin's widening, for the thread that initialises the runtime.
  const gov::PoolContext c = pool_context();
  gov::PinFacts f;
  f.governing = c.governing;
  f.pin_off = c.pin_off;
  f.runtime_binding = true;
  f.creator_in_pool = rt::current_pool() >= 0;
  if (!gov::pin_verdict(f).widen || rt::process_cpus().empty()) return;
  auto procs = PW_REAL_AT(omp_get_num_procs, caller_pc);
  if (!procs) return;
  std::vector<int> mine;
  if (topo::affinity_get(0, &mine) != 0 || topo::affinity_set(0, rt::process_cpus()) != 0) return;
  procs();
  topo::affinity_set(0, mine);
}

// Once per libomp runtime (a process may carry a system libomp and a wheel's
// private copy), before its first parallel region binds anything: turns its
// own binding off — unless the user chose a binding, or the program reads
// affinity through the OpenMP API, which needs libomp's binding on.
void libomp_first_sight(const void* caller_pc, bool at_fork) {
  const gov::OmpBinding binding = g_binding.load(std::memory_order_relaxed);
  if (binding == gov::OmpBinding::kNone) return;
  void* fn = reinterpret_cast<void*>(PW_REAL_AT(kmp_set_defaults, caller_pc));
  if (!fn) return;  // not libomp: libgomp binds nothing unless asked
  for (std::atomic<void*>& slot : g_libomp_told)
    if (slot.load(std::memory_order_acquire) == fn) return;
  // The objects' imports are read only where the answer can matter.
  const char* api = nullptr;
  const bool reads_api =
      binding == gov::OmpBinding::kOff &&
      any_object_imports(kAffinityApi, sizeof kAffinityApi / sizeof *kAffinityApi, &api);
  const gov::LibompStep step = gov::libomp_first_sight(binding, reads_api, at_fork);
  if (step == gov::LibompStep::kNothing) return;
  for (std::atomic<void*>& slot : g_libomp_told) {
    void* seen = slot.load(std::memory_order_acquire);
    if (seen == fn) return;
    if (seen != nullptr || !slot.compare_exchange_strong(seen, fn)) {
      if (seen == fn) return;
      continue;
    }
    if (step == gov::LibompStep::kTurnOff) {
      const OmpVendor vendor = omp_vendor_of(fn);
      const char* name = vendor == OmpVendor::kIntel ? "libiomp5" : "libomp";
      if (libomp_disable(fn, vendor, caller_pc)) {
        rt::framework_note(name, "KMP_AFFINITY (kmp_set_defaults)", "disabled", true,
                           "the runtime would bind every thread to the first pinned thread's "
                           "core");
      } else {
        g_libomp_own_binding.store(true, std::memory_order_relaxed);
        rt::framework_note(name, "KMP_AFFINITY", "the runtime's default", false,
                           "the runtime was initialised before parwidth could turn its binding "
                           "off (a task, omp_get_level() or kmp_set_defaults first); it keeps "
                           "its own binding and its threads are not pinned");
      }
      return;
    }
    if (step == gov::LibompStep::kKeepOwn) {
      g_libomp_own_binding.store(true, std::memory_order_relaxed);
      rt::framework_note("libomp", "KMP_AFFINITY", "libomp's default", false,
                         std::string("the program reads thread affinity (") + api +
                             "); libomp keeps its own binding and its threads are not pinned");
    }
    libomp_init_wide(caller_pc);
    return;
  }
}

// True if the caller is inside a parallel region (any level, active or
// not): its nthreads ICV is the one its task inherited, not its own to cap.
bool inside_region(const void* caller_pc) {
  auto level = PW_REAL_AT(omp_get_level, caller_pc);
  return level && level() > 0;
}

// Whether one of `vars` is set to a non-empty value; the first one and its value.
template <size_t N>
bool first_set(const char* const (&vars)[N], const char** var, const char** value) {
  for (const char* v : vars) {
    const char* val = getenv(v);
    if (val && *val) {
      *var = v;
      *value = val;
      return true;
    }
  }
  return false;
}

}  // namespace

void omp_before_region(const void* caller_pc) {
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return;
  const unsigned gen = rt::omp_generation();
  if (t_applied_gen == gen) return;
  libomp_first_sight(caller_pc, true);
  // A worker (or a thread in a nested or serialized region) uses the ICV its
  // master handed down: the master's cap, or what the user set on it.
  if (inside_region(caller_pc)) return;
  const bool set_before = t_applied_gen != 0;
  t_applied_gen = gen;
  if (!gov::omp_team_resize(set_before, rt::omp_count_guarded()).apply) return;
  // The cap, unless the program set this thread's count.
  gov::PoolKnob team;
  team.role = gov::PoolRole::kOmpTeam;
  team.user_set = t_user_set;
  const gov::SettingDecision d = gov::pool_knob_decide(pool_context(), team);
  // The runtime the caller uses (a wheel may bundle its own libgomp).
  auto set = PW_REAL_AT(omp_set_num_threads, caller_pc);
  if (!set) return;
  if (d.changes()) set(d.value);
  // MKL's count for this thread, where an MKL is loaded (torch's wheel links
  // it into libtorch_cpu.so).
  if (d.changes()) {
    auto mkl = PW_REAL_AT(MKL_Set_Num_Threads_Local, caller_pc);
    const char* mkl_env = getenv("MKL_NUM_THREADS");
    if (mkl &&
        gov::omp_team_reaches_mkl(
            d, (mkl_env && *mkl_env) || blas_user_called(reinterpret_cast<const void*>(mkl))))
      mkl(d.value);
  }
  // LLVM's and Intel's runtimes: this thread's teams wait as governor/pools_wait
  // says (libgomp's wait was set in the environment at load).
  const long blocktime = g_blocktime.load(std::memory_order_relaxed);
  if (blocktime < 0) return;
  const char* runtime = object_name_of(reinterpret_cast<const void*>(set));
  if (gov::omp_runtime_of(runtime) != gov::OmpRuntime::kLlvm) return;
  auto bt = PW_REAL_AT(kmp_set_blocktime, caller_pc);
  if (bt && object_name_of(reinterpret_cast<const void*>(bt)) == runtime)
    bt(static_cast<int>(blocktime));
}

bool omp_thread_left_to_runtime(const void* caller_pc, const char** why) {
  const gov::OmpThreadLeft t =
      gov::omp_thread_left(g_binding.load(std::memory_order_relaxed),
                           g_libomp_own_binding.load(std::memory_order_relaxed),
                           gov::omp_runtime_of(object_name_of(caller_pc)));
  if (t.left) *why = t.why;
  return t.left;
}

void omp_on_activate() {
  // How LLVM's and Intel's teams wait (they read KMP_BLOCKTIME at their own
  // start, but take kmp_set_blocktime from each master thread at any time).
  const char* bt_user = getenv("KMP_BLOCKTIME");
  const char* library = getenv("KMP_LIBRARY");
  gov::WaitFacts wait;
  wait.knob = gov::WaitKnob::kKmpBlocktime;
  wait.user_set = (bt_user && *bt_user) || (library && *library);
  const gov::WaitDecision bt = gov::wait_decide(pool_context(), wait);
  g_blocktime.store(bt.changes() ? bt.value : -1, std::memory_order_relaxed);
  rt::wait_decided(gov::WaitKnob::kKmpBlocktime, bt);
  const char* bind_var = "";
  const char* bind_value = "";
  const char* display_var = "";
  const char* display_value = "";
  const bool user_binding = first_set(gov::kOmpBindingVars, &bind_var, &bind_value);
  const bool display = first_set(gov::kOmpDisplayVars, &display_var, &display_value);
  const gov::OmpBinding binding = gov::omp_binding_decide(pool_context(), user_binding, display);
  g_binding.store(binding, std::memory_order_relaxed);
  switch (binding) {
    case gov::OmpBinding::kNone:
      return;
    case gov::OmpBinding::kUser:
      rt::framework_note("openmp", bind_var, bind_value, false,
                         "thread binding chosen by the user; kept (the OpenMP runtimes' threads "
                         "are not pinned by parwidth)");
      return;
    case gov::OmpBinding::kLibompOwn:
      g_libomp_own_binding.store(true, std::memory_order_relaxed);
      rt::framework_note("libomp", "KMP_AFFINITY", "libomp's default", false,
                         std::string(display_var) +
                             " is set: libomp keeps its own binding and its "
                             "threads are not pinned");
      return;
    case gov::OmpBinding::kOff:
      // A libomp linked into the program: before any thread of it can run a region.
      libomp_first_sight(reinterpret_cast<const void*>(&omp_on_activate), false);
      return;
  }
}

}  // namespace pw::hooks

using pw::hooks::omp_before_region;

PW_HOOK(void, omp_set_num_threads, (int n)) {
  auto real = PW_REAL(omp_set_num_threads);
  if (!real) {
    PW_MISSING(omp_set_num_threads);
    return;
  }
  {
    pw::hooks::Guard guard;
    if (guard.entered() && pw::rt::selected() && pw::rt::ensure_active()) {
      bool user = true;
      pw::hooks::framework_sets_omp_threads(__builtin_return_address(0), &user);
      pw::hooks::t_user_set = user;
      // The program's own count, unless PARWIDTH_OVERRIDE=1 lowers it to the cap.
      // A framework passing parwidth's count on (torch's at::set_num_threads
      // at its init) is held to the cap in force now: the plan may have
      // changed since the count was chosen. It also sets MKL's count for this
      // thread after this call, from its own argument: the thread's next
      // region applies the cap again, to both.
      pw::gov::PoolKnob team;
      team.role = pw::gov::PoolRole::kOmpTeam;
      team.kind = pw::gov::SettingKind::kCeiling;
      team.current = n;
      team.user_set = user;
      n = pw::gov::pool_knob_decide(pw::hooks::pool_context(), team).value;
      pw::hooks::t_applied_gen = user ? pw::rt::omp_generation() : 0;
    }
  }
  real(n);
}

PW_HOOK(int, omp_get_max_threads, (void)) {
  omp_before_region(__builtin_return_address(0));
  auto real = PW_REAL(omp_get_max_threads);
  return real ? real() : (PW_MISSING(omp_get_max_threads), 1);
}

// Initialises libomp's affinity machinery (MKL's Intel threading layer asks
// it before its first region): its binding must be turned off first, or the
// runtime ignores the change and warns on the program's stderr.
PW_HOOK(int, omp_get_num_procs, (void)) {
  omp_before_region(__builtin_return_address(0));
  auto real = PW_REAL(omp_get_num_procs);
  return real ? real() : (PW_MISSING(omp_get_num_procs), 1);
}

// The compiler-facing entry points: apply the cap, then the original, unchanged.
#define PW_GOMP_HOOK(name, params, args)            \
  PW_HOOK(void, name, params) {                     \
    omp_before_region(__builtin_return_address(0)); \
    auto real = PW_REAL(name);                      \
    if (!real) {                                    \
      PW_MISSING(name);                             \
      return;                                       \
    }                                               \
    real args;                                      \
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
  auto real = PW_REAL(GOMP_parallel_reductions);
  return real ? real(fn, data, n, flags) : (PW_MISSING(GOMP_parallel_reductions), 0u);
}
