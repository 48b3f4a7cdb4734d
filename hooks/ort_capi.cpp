// hooks/ort_capi: ONNX Runtime's C API. A C or C++ program reaches ORT only
// through the table that OrtGetApiBase()->GetApi(version) returns (the one
// exported entry of libonnxruntime.so besides the CPU provider's), so the
// hook on OrtGetApiBase puts wrappers into that table, once per library,
// before the program can read it: the session constructors (planned from the
// model they load) and the thread setters (the program's explicit choices,
// kept unless PARWIDTH_OVERRIDE=1). The session gets the plan on a clone of
// the program's SessionOptions; the program's own object is not changed.
//
// OrtApi is append-only: an entry's index never changes between versions.
// The indices below were counted in onnxruntime_c_api.h of API versions 1 and
// 13 (they agree); the table is changed only if the library serves version 13.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dirent.h>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/ort.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

enum Index : int {
  kCreateSession = 7,
  kCreateSessionFromArray = 8,
  kCloneSessionOptions = 12,
  kSetSessionExecutionMode = 13,
  kSetIntraOpNumThreads = 24,
  kSetInterOpNumThreads = 25,
  kReleaseSessionOptions = 100,
  kAddSessionConfigEntry = 130,
  kEntries = 131,
};
constexpr uint32_t kMinVersion = 13;  // serves every index above

using Status = void*;  // OrtStatus*, nullptr = success
using Fn = void*;

// The originals, taken from the table before it is changed.
std::atomic<Fn> g_orig[kEntries];
std::mutex g_mu;  // patching, and the options records

// What the program set on each OrtSessionOptions (bounded: a program that
// leaks options objects only loses the oldest records).
struct Record {
  const void* opts;
  OrtUserOptions u;
};
std::vector<Record>& records() {
  static auto* v = new std::vector<Record>();
  return *v;
}
OrtUserOptions* record_for(const void* opts, bool create) {
  for (Record& r : records())
    if (r.opts == opts) return &r.u;
  if (!create) return nullptr;
  if (records().size() >= 256) records().erase(records().begin());
  records().push_back({opts, {}});
  return &records().back().u;
}
OrtUserOptions user_of(const void* opts) {
  std::lock_guard<std::mutex> lock(g_mu);
  const OrtUserOptions* u = record_for(opts, false);
  return u ? *u : OrtUserOptions{};
}

template <typename F>
F orig(int i) {
  return reinterpret_cast<F>(g_orig[i].load(std::memory_order_acquire));
}

int task_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (struct dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

// --- wrappers ------------------------------------------------------------

Status set_intra(void* opts, int n) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (OrtUserOptions* u = record_for(opts, true)) u->intra = n;
  }
  return orig<Status (*)(void*, int)>(kSetIntraOpNumThreads)(opts, n);
}
Status set_inter(void* opts, int n) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (OrtUserOptions* u = record_for(opts, true)) u->inter = n;
  }
  return orig<Status (*)(void*, int)>(kSetInterOpNumThreads)(opts, n);
}
Status set_mode(void* opts, int mode) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (OrtUserOptions* u = record_for(opts, true)) u->parallel = mode == 1;
  }
  return orig<Status (*)(void*, int)>(kSetSessionExecutionMode)(opts, mode);
}
Status add_config(void* opts, const char* key, const char* value) {
  if (key && value && strcmp(key, "session.intra_op.allow_spinning") == 0) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (OrtUserOptions* u = record_for(opts, true)) u->spin = atoi(value);
  }
  return orig<Status (*)(void*, const char*, const char*)>(kAddSessionConfigEntry)(opts, key,
                                                                                   value);
}
Status clone_options(const void* in, void** out) {
  Status s = orig<Status (*)(const void*, void**)>(kCloneSessionOptions)(in, out);
  if (!s && out && *out) {
    std::lock_guard<std::mutex> lock(g_mu);
    const OrtUserOptions* u = record_for(in, false);
    if (u) {
      const OrtUserOptions copy = *u;
      *record_for(*out, true) = copy;
    }
  }
  return s;
}

// A clone of the program's options with the plan's settings, or nullptr
// when nothing is to change (or anything failed: then the program's own).
void* planned_options(const void* opts, const void* model, size_t size, bool is_path) {
  const OrtPlanned p = ort_session_plan(model, size, is_path, user_of(opts), "C API");
  if (p.intra < 0 && p.inter < 0 && p.parallel < 0 && p.spin < 0) return nullptr;
  void* clone = nullptr;
  if (orig<Status (*)(const void*, void**)>(kCloneSessionOptions)(opts, &clone) || !clone)
    return nullptr;
  bool ok = true;
  if (p.intra >= 0) ok = ok && !orig<Status (*)(void*, int)>(kSetIntraOpNumThreads)(clone, p.intra);
  if (p.inter >= 0) ok = ok && !orig<Status (*)(void*, int)>(kSetInterOpNumThreads)(clone, p.inter);
  if (p.parallel == 1) ok = ok && !orig<Status (*)(void*, int)>(kSetSessionExecutionMode)(clone, 1);
  if (p.spin == 0) {
    auto add = orig<Status (*)(void*, const char*, const char*)>(kAddSessionConfigEntry);
    ok = ok && !add(clone, "session.intra_op.allow_spinning", "0") &&
         !add(clone, "session.inter_op.allow_spinning", "0");
  }
  // A failed setter leaks its OrtStatus (the release entry is not ours to
  // call from here): it never failed in the tests, and the clone is dropped.
  if (!ok) {
    orig<void (*)(void*)>(kReleaseSessionOptions)(clone);
    rt::warn_once("ort-capi-set",
                  "onnxruntime: a session option was refused; the program's own "
                  "options were used");
    return nullptr;
  }
  return clone;
}

void note_used(const void* clone, int before, const OrtPlanned* /*unused*/) {
  ort_session_used("threads_started=" + std::to_string(task_count() - before) +
                   (clone ? " (the plan's options)" : " (the program's options)"));
}

Status create_session(const void* env, const char* path, const void* opts, void** out) {
  auto real = orig<Status (*)(const void*, const char*, const void*, void**)>(kCreateSession);
  void* clone = nullptr;
  if (!fail_open("ort-capi-session", [&] {
        clone = path && opts ? planned_options(opts, path, strlen(path), true) : nullptr;
      }))
    clone = nullptr;
  const int before = task_count();
  Status s = real(env, path, clone ? clone : opts, out);
  if (!s) note_used(clone, before, nullptr);
  if (clone) orig<void (*)(void*)>(kReleaseSessionOptions)(clone);
  return s;
}

Status create_session_from_array(const void* env, const void* data, size_t size, const void* opts,
                                 void** out) {
  auto real = orig<Status (*)(const void*, const void*, size_t, const void*, void**)>(
      kCreateSessionFromArray);
  void* clone = nullptr;
  if (!fail_open("ort-capi-session", [&] {
        clone = data && size && opts ? planned_options(opts, data, size, false) : nullptr;
      }))
    clone = nullptr;
  const int before = task_count();
  Status s = real(env, data, size, clone ? clone : opts, out);
  if (!s) note_used(clone, before, nullptr);
  if (clone) orig<void (*)(void*)>(kReleaseSessionOptions)(clone);
  return s;
}

// --- the table ---------------------------------------------------------------

struct ApiBase {
  const void* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
};

// Whether the page of addr is mapped read-only now (so it is put back so).
bool page_read_only(const void* addr) {
  FILE* f = fopen("/proc/self/maps", "re");
  if (!f) return true;
  char line[512];
  bool ro = true;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  while (fgets(line, sizeof line, f)) {
    uintptr_t lo = 0, hi = 0;
    char perms[8] = {};
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && a >= lo && a < hi) {
      ro = perms[1] != 'w';
      break;
    }
  }
  fclose(f);
  return ro;
}

std::atomic<const void*> g_patched{nullptr};

void patch(const ApiBase* base) {
  if (!base || !base->GetApi || !rt::selected()) return;
  const void* api = base->GetApi(kMinVersion);
  if (!api || g_patched.load(std::memory_order_acquire) == api) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_patched.load() == api) return;
  if (g_patched.load() != nullptr) {
    rt::warn_once("ort-capi-two",
                  "onnxruntime: a second ORT library in the process; its C API "
                  "sessions are not governed");
    return;
  }
  Fn* table = const_cast<Fn*>(static_cast<const Fn*>(api));
  const long page = sysconf(_SC_PAGESIZE);
  const auto lo = reinterpret_cast<uintptr_t>(table) & ~static_cast<uintptr_t>(page - 1);
  const auto hi = reinterpret_cast<uintptr_t>(table + kEntries);
  const size_t len = hi - lo;
  const bool ro = page_read_only(table);
  if (mprotect(reinterpret_cast<void*>(lo), len, PROT_READ | PROT_WRITE) != 0) {
    rt::warn_once("ort-capi-mprotect",
                  "onnxruntime: the C API table cannot be changed; C API sessions run ungoverned");
    return;
  }
  for (int i = 0; i < kEntries; ++i) g_orig[i].store(table[i], std::memory_order_release);
  table[kCreateSession] = reinterpret_cast<Fn>(&create_session);
  table[kCreateSessionFromArray] = reinterpret_cast<Fn>(&create_session_from_array);
  table[kCloneSessionOptions] = reinterpret_cast<Fn>(&clone_options);
  table[kSetSessionExecutionMode] = reinterpret_cast<Fn>(&set_mode);
  table[kSetIntraOpNumThreads] = reinterpret_cast<Fn>(&set_intra);
  table[kSetInterOpNumThreads] = reinterpret_cast<Fn>(&set_inter);
  table[kAddSessionConfigEntry] = reinterpret_cast<Fn>(&add_config);
  if (ro) mprotect(reinterpret_cast<void*>(lo), len, PROT_READ);
  g_patched.store(api, std::memory_order_release);
}

}  // namespace
}  // namespace pw::hooks

PW_HOOK(const OrtApiBase*, OrtGetApiBase, (void)) {
  auto real = PW_REAL(OrtGetApiBase);
  if (!real) {
    PW_MISSING(OrtGetApiBase);
    return nullptr;
  }
  const OrtApiBase* base = real();
  pw::hooks::Guard guard;
  if (guard.entered()) {
    pw::hooks::fail_open("ort-capi-patch", [&] {
      pw::hooks::patch(reinterpret_cast<const pw::hooks::ApiBase*>(base));
    });
  }
  return base;
}
