// hooks/blas: OpenBLAS, MKL and BLIS thread pools, found wherever they come
// from (a system library, a wheel's renamed private copy, one dlopen'ed late)
// and capped at the plan's threads per pool.
//
// Each library is known by a part of its file name and by the functions that
// set and read its thread count; a wheel's renamed OpenBLAS (numpy's
// libscipy_openblas64_) has the same functions under a prefix and suffix.
// The libraries' functions are read from their own symbol tables inside a
// dl_iterate_phdr walk (memory reads: hooks/real.cpp's object_defines), with
// no loader call inside it: dlopen/dlsym/dladdr in its callback take the
// loader's locks in the opposite order to a dlopen on another thread, and the
// two deadlock. The libraries themselves are called after the walk.
#include "hooks/blas.h"

#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "governor/pools_blas.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/pools.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

struct Library {
  const char* name;       // the report's name
  const char* file_part;  // a substring of the object's file name
  const char* set[4];     // thread-count setters, first found wins
  const char* get[4];     // the matching getters, same order
  const char* env[4];     // environment variables the library reads, in its order
  int unset;              // the count a getter value <= 0 stands for (0: unknown)
};

const Library kLibraries[] = {
    {"openblas",
     "openblas",
     {"openblas_set_num_threads", "openblas_set_num_threads64_",
      "scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads"},
     {"openblas_get_num_threads", "openblas_get_num_threads64_",
      "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads"},
     {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", nullptr},
     0},
    // Debian's libblas.so.3 from OpenBLAS: a front whose calls land in
    // libopenblas.so.0 (object_defines keeps the one that defines them).
    {"openblas",
     "libblas",
     {"openblas_set_num_threads", nullptr, nullptr, nullptr},
     {"openblas_get_num_threads", nullptr, nullptr, nullptr},
     {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", nullptr},
     0},
    {"mkl",
     "mkl_rt",
     {"MKL_Set_Num_Threads", nullptr, nullptr, nullptr},
     {"MKL_Get_Max_Threads", nullptr, nullptr, nullptr},
     {"MKL_NUM_THREADS", "OMP_NUM_THREADS", nullptr, nullptr},
     0},
    {"blis",
     "libblis",
     {"bli_thread_set_num_threads", nullptr, nullptr, nullptr},
     {"bli_thread_get_num_threads", nullptr, nullptr, nullptr},
     {"BLIS_NUM_THREADS", "OMP_NUM_THREADS", nullptr, nullptr},
     // BLIS without a count runs single-threaded (bli_thread_get_num_threads: -1);
     // its pthread build starts threads per call rather than keeping a pool.
     1},
};

// A pool found: the object that defines its functions.
struct Found {
  const Library* lib;
  std::string object;  // file base name
  uintptr_t base;      // its load address (object_base_of)
  void (*set)(int);
  int (*get)(void);
};

// Never destroyed: hooks may run while the process exits.
struct BlasState {
  std::mutex mu;                            // the sweep (one at a time)
  std::atomic<unsigned long long> adds{0};  // dlpi_adds at the last sweep
  std::vector<uintptr_t> seen;              // bases of objects already handled
  std::vector<Found> found;                 // the pools of those objects (under mu)
  // The user's own set calls, per defining object (base), through our hooks.
  std::mutex user_mu;
  std::vector<std::pair<uintptr_t, std::string>> user_calls;
  // The pools parwidth sized (under mu), each with the size it had before:
  // they follow the plan when the node is divided again (blas_follow).
  struct Owned {
    Found pool;
    int before;  // the library's own size (<= 0: unknown)
    int set;     // the size parwidth set last
  };
  std::vector<Owned> owned;
  int follow_notes = 0;
};
BlasState& state() {
  static BlasState* s = new BlasState();
  return *s;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Every loaded object whose name marks it as a BLAS library and that itself
// defines a known set/get pair. Nothing is allocated inside the walk (it
// holds the loader's lock): the objects are noted in a fixed table first.
std::vector<Found> loaded_pools() {
  struct Walk {
    struct Seen {
      const Library* lib;
      char object[128];
      uintptr_t base;
      void* set;
      void* get;
    } seen[16];
    int n = 0;
  } w;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        Walk* walk = static_cast<Walk*>(data);
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        const char* file = strrchr(info->dlpi_name, '/');
        file = file ? file + 1 : info->dlpi_name;
        for (const Library& l : kLibraries) {
          if (!strstr(file, l.file_part)) continue;
          for (int i = 0; i < 4 && l.set[i] && walk->n < 16; ++i) {
            void* set = object_defines(info, l.set[i]);
            void* get = object_defines(info, l.get[i]);
            if (!set || !get) continue;
            Walk::Seen& x = walk->seen[walk->n++];
            x.lib = &l;
            snprintf(x.object, sizeof x.object, "%s", file);
            x.base = static_cast<uintptr_t>(info->dlpi_addr);
            x.set = set;
            x.get = get;
            break;
          }
        }
        return 0;
      },
      &w);
  std::vector<Found> out;
  out.reserve(static_cast<size_t>(w.n));
  for (int i = 0; i < w.n; ++i)
    out.push_back({w.seen[i].lib, w.seen[i].object, w.seen[i].base,
                   reinterpret_cast<void (*)(int)>(w.seen[i].set),
                   reinterpret_cast<int (*)(void)>(w.seen[i].get)});
  return out;
}

std::string user_call_for(uintptr_t base) {
  BlasState& s = state();
  std::lock_guard<std::mutex> lock(s.user_mu);
  for (const auto& c : s.user_calls)
    if (c.first == base) return c.second;
  return "";
}

// Decides for one pool and notes it; returns the decision (the caller applies it).
gov::BlasPoolDecision decide(const Found& f, const char* trigger, int before) {
  std::string who;
  for (int i = 0; i < 4 && f.lib->env[i]; ++i) {
    const char* v = getenv(f.lib->env[i]);
    if (v && *v) {
      who = std::string(f.lib->env[i]) + "=" + v;
      break;
    }
  }
  const std::string call = user_call_for(f.base);
  if (!call.empty()) who = call;  // the later, more specific choice
  const gov::PoolContext ctx = pool_context();
  gov::BlasPoolFacts facts;
  facts.count = before;
  facts.unset = f.lib->unset;
  facts.user_set = !who.empty();
  const gov::BlasPoolDecision b = gov::blas_pool_decide(ctx, facts);
  const gov::SettingDecision& d = b.setting;
  rt::PoolNote n;
  n.library = f.lib->name;
  n.object = f.object;
  n.before = b.before > 0 ? b.before : -1;
  n.after = d.value > 0 ? d.value : -1;
  n.set_by = d.changes() ? "parwidth" : who.empty() ? "library default" : "user: " + who;
  n.applied = d.changes();
  n.why = std::string(gov::setting_verdict_text(d.verdict)) + "; plan threads per pool " +
          std::to_string(ctx.threads) +
          (who.empty() || d.verdict == gov::SettingVerdict::kKeep ? "" : " (was " + who + ")") +
          "; found " + trigger;
  rt::pool_note(n);
  rt::framework_note(n.library, n.object + " thread pool", std::to_string(n.after), n.applied,
                     n.why);
  return b;
}

}  // namespace

void blas_sweep(const char* trigger) {
  // Selected, not activated: a process without a BLAS library (a plain
  // Python script) must not activate just because it was swept.
  if (!rt::selected()) return;
  BlasState& s = state();
  const unsigned long long adds = load_count().adds;
  if (adds != 0 && adds == s.adds.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread sweeps now
  std::vector<Found> found;
  {
    Guard guard;
    if (!guard.entered()) return;
    fail_open("blas-sweep", [&] {
      for (const Found& f : loaded_pools()) {
        bool seen = false;
        for (uintptr_t b : s.seen) seen = seen || b == f.base;
        if (seen) continue;
        s.seen.push_back(f.base);
        s.found.push_back(f);
        found.push_back(f);
      }
    });
    s.adds.store(adds, std::memory_order_relaxed);
  }
  if (found.empty() || !rt::ensure_active()) {
    if (!found.empty()) {  // not governed after all: look again next time
      for (const Found& f : found) {
        for (size_t i = 0; i < s.seen.size(); ++i)
          if (s.seen[i] == f.base) s.seen.erase(s.seen.begin() + static_cast<long>(i--));
        for (size_t i = 0; i < s.found.size(); ++i)
          if (s.found[i].base == f.base) s.found.erase(s.found.begin() + static_cast<long>(i--));
      }
      s.adds.store(0, std::memory_order_relaxed);
    }
    return;
  }
  // Outside the guard: reading MKL's count loads its threading layer and
  // starts the OpenMP runtime, whose first calls our OpenMP hooks must see
  // (libomp's binding is turned off there); a larger pool starts threads
  // that our pthread_create hook must pin.
  for (const Found& f : found) {
    // The library is called outside fail_open: it is the host's code.
    const int before = f.get();
    gov::BlasPoolDecision b;
    if (!fail_open("blas-decide", [&] { b = decide(f, trigger, before); })) continue;
    if (b.setting.changes() && b.setting.value > 0) f.set(b.setting.value);
    // Not the user's: it follows later plans (governor/pools_blas).
    if (b.follows)
      fail_open("blas-follow", [&] { s.owned.push_back({f, b.before, b.setting.value}); });
  }
}

void blas_follow(int threads) {
  if (threads <= 0) return;
  BlasState& s = state();
  std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
  if (!lock.owns_lock()) return;  // a sweep runs: it caps at the plan in force
  for (BlasState::Owned& o : s.owned) {
    // Never above the library's own size: parwidth only caps.
    const int want = gov::blas_follow_size(threads, o.before);
    if (want == o.set) continue;
    o.pool.set(want);
    if (s.follow_notes++ < 32)
      rt::framework_note(o.pool.lib->name, o.pool.object + " thread pool", std::to_string(want),
                         true,
                         "the plan in force has " + std::to_string(threads) +
                             " threads per pool (was " + std::to_string(o.set) + ")");
    o.set = want;
  }
}

void blas_values(std::vector<rt::RuntimeValue>* out) {
  BlasState& s = state();
  std::vector<Found> found;
  {
    std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
    if (!lock.owns_lock()) return;  // a sweep runs (another thread at exit): none read
    found = s.found;
  }
  for (const Found& f : found) {
    rt::RuntimeValue v;
    v.runtime = f.lib->name;
    v.object = f.object;
    v.setting = "threads (its own getter)";
    v.value = f.get();
    if (strcmp(f.lib->name, "openblas") == 0)
      v.waits = rt::pool_wait_text(gov::WaitKnob::kOpenblasTimeout, f.object);
    out->push_back(std::move(v));
  }
}

bool blas_user_called(const void* fn) {
  const uintptr_t base = object_base_of(fn);
  return base && !user_call_for(base).empty();
}

// The value a user's explicit set call (through our hook) passes on.
int blas_user_set(const char* function, int n, const void* caller_pc, const void* real) {
  if (n <= 0 || !real) return n;
  Guard guard;
  if (!guard.entered() || !rt::selected() || !rt::ensure_active()) return n;
  // The library calling itself: not the user.
  if (same_object(caller_pc, real)) return n;
  const uintptr_t base = object_base_of(real);
  int value = n;
  fail_open("blas-user-set", [&] {
    const char* obj = object_name_of(caller_pc);
    const std::string who = std::string(function) + "(" + std::to_string(n) + ") from " +
                            (obj && *obj ? base_name(obj) : "the program");
    {
      BlasState& s = state();
      std::lock_guard<std::mutex> lock(s.user_mu);
      bool found = false;
      for (auto& c : s.user_calls)
        if (c.first == base) c.second = who, found = true;
      if (!found) s.user_calls.push_back({base, who});
    }
    const gov::SettingDecision d = gov::blas_call_decide(pool_context(), n);
    rt::PoolNote note;
    note.library = strstr(function, "MKL") || strstr(function, "mkl") ? "mkl"
                   : strstr(function, "bli")                          ? "blis"
                                                                      : "openblas";
    const char* defining = object_name_of(real);
    note.object = defining ? base_name(defining) : "";
    note.before = -1;  // the library's count before the call is not read here
    note.after = d.value > 0 ? d.value : n;
    note.set_by = d.changes() ? "parwidth" : "user: " + who;
    note.applied = d.changes();
    note.why = std::string(gov::setting_verdict_text(d.verdict)) + " (" + who + ")";
    rt::pool_note(note);
    rt::framework_note(note.library, note.object + " thread pool (" + function + ")",
                       std::to_string(note.after), note.applied, note.why);
    value = d.value > 0 ? d.value : n;
  });
  return value;
}

}  // namespace pw::hooks

// BLIS counts in dim_t (64-bit); the others in int.
#define PW_BLAS_SET_HOOK(name, type)                                                  \
  PW_HOOK(void, name, (type n)) {                                                     \
    auto real = PW_REAL(name);                                                        \
    if (!real) {                                                                      \
      PW_MISSING(name);                                                               \
      return;                                                                         \
    }                                                                                 \
    const int asked = n > 4096 ? 4096 : static_cast<int>(n);                          \
    const int v = pw::hooks::blas_user_set(#name, asked, __builtin_return_address(0), \
                                           reinterpret_cast<const void*>(real));      \
    real(v == asked ? n : static_cast<type>(v));                                      \
  }

PW_BLAS_SET_HOOK(openblas_set_num_threads, int)
PW_BLAS_SET_HOOK(MKL_Set_Num_Threads, int)
PW_BLAS_SET_HOOK(mkl_set_num_threads, int)
PW_BLAS_SET_HOOK(bli_thread_set_num_threads, long)
