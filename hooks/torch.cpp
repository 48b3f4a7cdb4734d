// hooks/torch: PyTorch's intra-op and inter-op thread counts (ATen in
// libtorch_cpu), set from the plan; the BLAS pools beside them are swept
// (hooks/blas.cpp) at torch's first init.
//
// What Debian's torch 1.13 does without us (hooks/README.md has the evidence):
// `import torch` runs torch/_C's initModule, which calls at::init_num_threads;
// that sets the calling thread's OpenMP team size to intraop_default_num_threads
// = hardware_concurrency / 2 on x86-64 (1 here). Every other thread runs
// init_num_threads again on its first parallel op (lazy_init_num_threads),
// through the PLT. So init_num_threads is the point where the plan goes in:
// the first call runs torch's own code, then at::set_num_threads(plan threads),
// as if the user had written torch.set_num_threads right after the import;
// later threads then copy that value themselves.
//
// Whose call it is: torch's own calls to at::set_num_threads come from
// libtorch_cpu itself (init_num_threads on a new thread); a user's come from
// torch/_C (libtorch_python) or a C++ program. A forked child (a DataLoader
// worker) calling it keeps its value: that is torch's policy for workers, and
// the child is governed as a process of its own.
//
// The inter-op pool (TorchScript fork/wait, at::launch) may be sized once,
// before it starts; a second call throws. It is sized lazily, at the first
// at::launch, so that a user's own torch.set_num_interop_threads after the
// import still works (and is kept).
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "governor/pools_torch.h"
#include "hooks/blas.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/pools.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

// Never destroyed: hooks may run while the process exits.
struct TorchState {
  std::atomic<bool> defaults_done{false};  // the first init_num_threads was seen
  std::atomic<bool> interop_done{false};   // the first at::launch was seen
  std::atomic<int> user_threads{0};        // the last explicit intra-op count (0: none)
  std::atomic<int> user_interop{0};        // the explicit inter-op count (0: none)
  std::atomic<int> noted_threads{0};       // the last user value written to the report
  std::atomic<pid_t> pid{0};               // the process that saw the first init
};
TorchState g_torch;

const char* const kName = "torch";

// Set while torch's own init_num_threads runs under our hook: it tail-calls
// at::set_num_threads, whose return address is then ours, not torch's.
thread_local bool t_in_init __attribute__((tls_model("initial-exec"))) = false;

// A forked child of the process where torch was initialised.
bool forked_child() {
  const pid_t p = g_torch.pid.load(std::memory_order_relaxed);
  return p != 0 && p != getpid();
}

gov::TorchFacts torch_facts() {
  gov::TorchFacts f;
  f.forked_child = forked_child();
  f.program_threads = g_torch.user_threads.load();
  f.program_interop = g_torch.user_interop.load();
  return f;
}

const char* user_thread_env(std::string* which) {
  for (const char* v : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    if (const char* val = getenv(v)) {
      if (*val) {
        *which = v;
        return val;
      }
    }
  }
  return nullptr;
}

// --------------------------------------------------------------- intra-op

// After torch's own init_num_threads: the first one in a process applies the plan.
void after_init(const void* caller_pc) {
  if (g_torch.defaults_done.load(std::memory_order_acquire)) return;
  int apply = 0;
  bool sweep = false;
  {
    Guard guard;
    if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return;
    if (g_torch.defaults_done.exchange(true)) return;
    g_torch.pid.store(getpid(), std::memory_order_relaxed);
    const bool ok = fail_open("torch-init", [&] {
      const gov::PoolContext ctx = pool_context();
      const int want = ctx.threads;
      auto omp_max = PW_REAL_AT(omp_get_max_threads, caller_pc);
      const int torch_default = omp_max ? omp_max() : 0;
      const std::string setting = "intra-op threads (at::set_num_threads)";
      std::string env_name;
      const char* env = user_thread_env(&env_name);
      const gov::TorchDecision t =
          gov::torch_init_decide(ctx, torch_facts(), torch_default, env != nullptr);
      const gov::SettingDecision& d = t.setting;
      sweep = t.sweep_blas;
      if (t.verdict == gov::TorchVerdict::kProgramSet) {
        // Noted at the program's call.
      } else if (d.verdict == gov::SettingVerdict::kKeep) {
        rt::framework_note(kName, setting, std::to_string(torch_default), false,
                           env_name + "=" + env + " set by the user, read by torch; " +
                               gov::setting_verdict_text(d.verdict));
      } else if (!d.changes()) {
        rt::framework_note(kName, setting, std::to_string(torch_default), false,
                           std::string(gov::setting_verdict_text(d.verdict)) +
                               ": torch's default " + std::to_string(torch_default) +
                               ", plan threads per pool " + std::to_string(want));
      } else {
        apply = d.value;
        rt::framework_note(
            kName, setting, std::to_string(want), true,
            "torch's default would be " + std::to_string(torch_default) +
                " (hardware_concurrency/2); plan threads per pool, set at "
                "torch's first init_num_threads" +
                (env ? " (" + env_name + "=" + env + " replaced, PARWIDTH_OVERRIDE=1)" : ""));
      }
    });
    if (!ok) apply = 0;
  }
  if (apply > 0) {
    auto set = PW_REAL_AT(_ZN2at15set_num_threadsEi, caller_pc);
    // at::set_num_threads throws only for n <= 0; creates torch's pthreadpool.
    if (set) set(apply);
  }
  // OpenBLAS (Debian's libblas.so.3 -> libopenblas.so.0) came with libtorch_cpu.
  if (sweep) blas_sweep("at torch's first init_num_threads");
}

// A count the program asked torch for: governor/pools_torch decides whether
// it stands (kept, observe mode, a forked child) or the plan's replaces it
// (OVERRIDE=1); noted unless `quiet` (the same count again).
int user_count_decide(const std::string& setting, gov::PoolRole role, int n, bool quiet) {
  const gov::PoolContext ctx = pool_context();
  const gov::TorchDecision t = gov::torch_count_decide(ctx, torch_facts(), role, n);
  if (t.verdict == gov::TorchVerdict::kChildKeeps) {
    rt::framework_note(kName, setting, std::to_string(n), false,
                       role == gov::PoolRole::kIntraOp
                           ? "called in a forked child (DataLoader workers set 1 thread each); "
                             "kept: the child is governed as its own process"
                           : "called in a forked child; kept: the child is governed as its own "
                             "process");
    return n;
  }
  const gov::SettingDecision& d = t.setting;
  if (!quiet)
    rt::framework_note(
        kName, setting, std::to_string(d.value), d.changes(),
        std::string(gov::setting_verdict_text(d.verdict)) + "; set by the user to " +
            std::to_string(n) + ", " +
            (role == gov::PoolRole::kIntraOp ? "plan threads per pool " : "plan pools ") +
            std::to_string(gov::pool_plan_value(ctx, role)));
  return d.value;
}

// The count an explicit at::set_num_threads(n) call gets.
int threads_for(int n, const void* caller_pc, const void* real) {
  if (n <= 0) return n;  // torch's own error, unchanged
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return n;
  // torch copying its value to a new thread
  if (t_in_init || same_object(caller_pc, real)) return n;
  int value = n;
  fail_open("torch-threads", [&] {
    const std::string setting = "intra-op threads (torch.set_num_threads)";
    // A forked child's count is not the parent's program's choice (not recorded).
    bool again = false;
    if (!forked_child()) {
      g_torch.user_threads.store(n);
      // Same value again (a loop): the same decision, written down already.
      again = g_torch.noted_threads.exchange(n) == n;
    }
    value = user_count_decide(setting, gov::PoolRole::kIntraOp, n, again);
  });
  return value;
}

// --------------------------------------------------------------- inter-op

int interop_for(int n, const void* caller_pc, const void* real) {
  if (n <= 0) return n;
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return n;
  if (t_in_init || same_object(caller_pc, real)) return n;
  int value = n;
  fail_open("torch-interop-count", [&] {
    const std::string setting = "inter-op threads (torch.set_num_interop_threads)";
    // A forked child's count is not the parent's program's choice (not recorded).
    if (!forked_child()) g_torch.user_interop.store(n);
    value = user_count_decide(setting, gov::PoolRole::kInterOp, n, false);
  });
  return value;
}

// Before the first at::launch starts the inter-op pool: size it from the plan.
void before_launch(const void* caller_pc) {
  if (g_torch.interop_done.load(std::memory_order_acquire)) return;
  int apply = 0;
  {
    Guard guard;
    if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return;
    if (g_torch.interop_done.exchange(true)) return;
    const bool ok = fail_open("torch-launch", [&] {
      const std::string setting = "inter-op pool size (at::set_num_interop_threads)";
      const gov::PoolContext ctx = pool_context();
      const int want = ctx.pools;
      const gov::TorchDecision t = gov::torch_launch_decide(ctx, torch_facts());
      const gov::SettingDecision& d = t.setting;
      if (t.verdict == gov::TorchVerdict::kChildKeeps) {
        rt::framework_note(kName, setting, "", false,
                           "forked child: torch's inherited setting kept");
      } else if (t.verdict == gov::TorchVerdict::kProgramSet) {
        // Noted at the program's call.
      } else if (!d.changes()) {
        rt::framework_note(
            kName, setting, std::to_string(want), false,
            std::string(gov::setting_verdict_text(d.verdict)) + ": the plan's pools, not applied");
      } else {
        apply = d.value;
        rt::framework_note(kName, setting, std::to_string(want), true,
                           "the plan's pools, set at the first at::launch (TorchScript "
                           "fork/wait), before the pool starts");
      }
    });
    if (!ok) apply = 0;
  }
  if (apply <= 0) return;
  auto set = PW_REAL_AT(_ZN2at23set_num_interop_threadsEi, caller_pc);
  if (!set) return;
  // It throws only if the count was set already or the pool has started;
  // every call that sets it and the pool's only entry point pass through
  // here first, so neither can have happened. Last resort: the host's own
  // work must go on.
  try {
    set(apply);
  } catch (...) {
    rt::warn_once("torch-interop", "torch refused the inter-op pool size; left as it was");
  }
}

}  // namespace

bool framework_sets_omp_threads(const void* caller_pc, bool* user_explicit) {
  auto* set = PW_REAL_AT(_ZN2at15set_num_threadsEi, caller_pc);
  if (!set || !same_object(caller_pc, reinterpret_cast<const void*>(set))) return false;
  // torch passing its count on: the user's where the program's count stands,
  // and in a forked worker (governor/pools_torch).
  *user_explicit = gov::torch_omp_count_is_users(pool_context(), torch_facts());
  return true;
}

}  // namespace pw::hooks

PW_HOOK(void, _ZN2at16init_num_threadsEv, (void)) {
  const void* caller = __builtin_return_address(0);
  auto real = PW_REAL(_ZN2at16init_num_threadsEv);
  if (!real) {
    PW_MISSING(_ZN2at16init_num_threadsEv);
    return;
  }
  pw::hooks::t_in_init = true;
  real();
  pw::hooks::t_in_init = false;
  pw::hooks::after_init(caller);
}

PW_HOOK(void, _ZN2at15set_num_threadsEi, (int nthreads)) {
  const void* caller = __builtin_return_address(0);
  auto real = PW_REAL(_ZN2at15set_num_threadsEi);
  if (!real) {
    PW_MISSING(_ZN2at15set_num_threadsEi);
    return;
  }
  real(pw::hooks::threads_for(nthreads, caller, reinterpret_cast<const void*>(real)));
}

PW_HOOK(void, _ZN2at23set_num_interop_threadsEi, (int nthreads)) {
  const void* caller = __builtin_return_address(0);
  auto real = PW_REAL(_ZN2at23set_num_interop_threadsEi);
  if (!real) {
    PW_MISSING(_ZN2at23set_num_interop_threadsEi);
    return;
  }
  real(pw::hooks::interop_for(nthreads, caller, reinterpret_cast<const void*>(real)));
}

PW_HOOK(void, _ZN2at6launchESt8functionIFvvEE, (std::function<void()> func)) {
  const void* caller = __builtin_return_address(0);
  auto real = PW_REAL(_ZN2at6launchESt8functionIFvvEE);
  if (!real) {
    PW_MISSING(_ZN2at6launchESt8functionIFvvEE);
    return;
  }
  pw::hooks::before_launch(caller);
  real(std::move(func));
}
