// counters/papi.cpp: PAPI's perf_event component through dlopen, counting the whole process.
//
// Why attach + inherit: perf_event counters follow tasks, and PAPI's granularity option has no
// per-process mode on this component (thread or whole-CPU only). Attaching the event set to the
// main thread with PAPI_INHERIT_ALL counts the main thread and every task it (or its descendants)
// creates after open(); reading the parent counter includes those children, live or exited.
// Threads that already existed, created by a thread other than main, are not counted: the preload
// starts the sampler on activation, normally the first pthread_create, when only main exists.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "counters/counters.h"

#if __has_include(<papi.h>)
#include <papi.h>
#define PW_HAVE_PAPI_H 1
#endif

namespace pw::counters {

#if PW_HAVE_PAPI_H

struct Papi::Api {
  decltype(&PAPI_library_init) library_init;
  decltype(&PAPI_is_initialized) is_initialized;
  decltype(&PAPI_get_component_index) get_component_index;
  decltype(&PAPI_get_component_info) get_component_info;
  decltype(&PAPI_create_eventset) create_eventset;
  decltype(&PAPI_assign_eventset_component) assign_eventset_component;
  decltype(&PAPI_attach) attach;
  decltype(&PAPI_set_opt) set_opt;
  decltype(&PAPI_add_named_event) add_named_event;
  decltype(&PAPI_start) start;
  decltype(&PAPI_read) read;
  decltype(&PAPI_stop) stop;
  decltype(&PAPI_cleanup_eventset) cleanup_eventset;
  decltype(&PAPI_destroy_eventset) destroy_eventset;
  decltype(&PAPI_strerror) strerror;
};

namespace {

constexpr const char* kDefaultLibrary = "libpapi.so.7.0";

// Loaded once per process and kept: see Papi::close.
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
Papi::Api g_api;
bool g_loaded = false;
char g_name[256];

enum Slot { kCtxSw, kMigr, kTaskClock, kCycles, kInstr, kSlots };
struct EventName {
  Slot slot;
  const char* names[2];  // alternatives, first that adds wins
};
constexpr EventName kSoftware[] = {
    {kCtxSw, {"perf::CONTEXT-SWITCHES", nullptr}},
    {kMigr, {"perf::CPU-MIGRATIONS", nullptr}},
    {kTaskClock, {"perf::TASK-CLOCK", nullptr}},
};
constexpr EventName kHardware[] = {
    {kCycles, {"PAPI_TOT_CYC", "perf::CYCLES"}},
    {kInstr, {"PAPI_TOT_INS", "perf::INSTRUCTIONS"}},
};

template <typename F>
bool bind(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  return *out != nullptr;
}

// Returns nullptr on success, else what failed (a static string, or `why` filled in).
const char* load(const char* library, char* why, size_t why_len) {
  if (g_loaded && strcmp(library, g_name) == 0) return nullptr;
  if (g_loaded) {
    // Asked for another file after loading one (tests do): it must be the same library.
    void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      snprintf(why, why_len, "dlopen %.80s failed: %.100s", library, e ? e : "?");
      return why;
    }
    bool same = dlsym(h, "PAPI_library_init") == reinterpret_cast<void*>(g_api.library_init);
    dlclose(h);
    return same ? nullptr : "a different libpapi is already in use by parwidth";
  }
  // A host that uses PAPI itself owns its global state (library init, thread ids): keep out.
  if (void* mine = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    dlclose(mine);
    return "the host process already loaded libpapi; not sharing its state";
  }
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    snprintf(why, why_len, "dlopen %.80s failed: %.100s", library, e ? e : "?");
    return why;
  }
  Papi::Api a{};
  bool ok = bind(h, "PAPI_library_init", &a.library_init) &&
            bind(h, "PAPI_is_initialized", &a.is_initialized) &&
            bind(h, "PAPI_get_component_index", &a.get_component_index) &&
            bind(h, "PAPI_get_component_info", &a.get_component_info) &&
            bind(h, "PAPI_create_eventset", &a.create_eventset) &&
            bind(h, "PAPI_assign_eventset_component", &a.assign_eventset_component) &&
            bind(h, "PAPI_attach", &a.attach) && bind(h, "PAPI_set_opt", &a.set_opt) &&
            bind(h, "PAPI_add_named_event", &a.add_named_event) &&
            bind(h, "PAPI_start", &a.start) && bind(h, "PAPI_read", &a.read) &&
            bind(h, "PAPI_stop", &a.stop) &&
            bind(h, "PAPI_cleanup_eventset", &a.cleanup_eventset) &&
            bind(h, "PAPI_destroy_eventset", &a.destroy_eventset) &&
            bind(h, "PAPI_strerror", &a.strerror);
  if (!ok) {
    dlclose(h);  // nothing of it ran yet, so unloading is safe
    return "libpapi lacks a required PAPI_* symbol";
  }
  g_api = a;
  g_loaded = true;
  snprintf(g_name, sizeof g_name, "%s", library);
  return nullptr;
}

}  // namespace

Status Papi::fail(Status s, const char* what, const char* detail) {
  const char* sep = detail ? ": " : "";
  snprintf(reason_, sizeof reason_, "%.90s%s%.160s", what, sep, detail ? detail : "");
  return s;
}

Status Papi::open(const char* library) {
  if (is_open()) return Status::kBusy;
  if (!library) library = kDefaultLibrary;
  char why[200];
  pthread_mutex_lock(&g_lock);
  const char* err = load(library, why, sizeof why);
  pthread_mutex_unlock(&g_lock);
  if (err) return fail(Status::kUnsupported, err, nullptr);
  api_ = &g_api;
  const Api& p = *api_;

  if (p.is_initialized() == PAPI_NOT_INITED) {
    int v = p.library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
      return fail(Status::kUnsupported, "PAPI_library_init failed",
                  v < 0 ? p.strerror(v) : "version mismatch");
    }
  }
  int cidx = p.get_component_index("perf_event");
  if (cidx < 0) return fail(Status::kUnsupported, "PAPI has no perf_event component", nullptr);
  const PAPI_component_info_t* ci = p.get_component_info(cidx);
  if (!ci) return fail(Status::kUnsupported, "PAPI perf_event component info missing", nullptr);
  if (ci->disabled) {
    return fail(Status::kUnsupported, "PAPI perf_event component disabled", ci->disabled_reason);
  }

  // Hardware events may add fine and still fail at start (no PMU in a VM): retry without them.
  Status s = Status::kUnsupported;
  for (bool with_hw : {true, false}) {
    int es = PAPI_NULL;
    int n_sw = 0, n_hw = 0;
    int r = p.create_eventset(&es);
    if (r != PAPI_OK) return fail(Status::kUnsupported, "PAPI_create_eventset", p.strerror(r));
    const char* step = "PAPI_assign_eventset_component";
    r = p.assign_eventset_component(es, cidx);
    if (r == PAPI_OK) {
      step = "PAPI_attach(main thread)";
      r = p.attach(es, static_cast<unsigned long>(getpid()));
    }
    if (r == PAPI_OK) {
      step = "PAPI_set_opt(PAPI_INHERIT)";
      PAPI_option_t o;
      memset(&o, 0, sizeof o);
      o.inherit.eventset = es;
      o.inherit.inherit = PAPI_INHERIT_ALL;
      r = p.set_opt(PAPI_INHERIT, &o);
    }
    for (int i = 0; i < kSlots; ++i) slot_of_[i] = -1;
    int idx = 0;
    if (r == PAPI_OK) {
      for (const EventName& e : kSoftware) {
        if (e.names[0] && p.add_named_event(es, e.names[0]) == PAPI_OK) {
          slot_of_[e.slot] = idx++;
          ++n_sw;
        }
      }
      for (const EventName& e : kHardware) {
        if (!with_hw) break;
        for (const char* name : e.names) {
          if (name && p.add_named_event(es, name) == PAPI_OK) {
            slot_of_[e.slot] = idx++;
            ++n_hw;
            break;
          }
        }
      }
      step = "no perf:: software event could be added";
      if (n_sw > 0) {
        step = "PAPI_start";
        r = p.start(es);
      } else {
        r = PAPI_ENOEVNT;
      }
    }
    if (r == PAPI_OK) {
      eventset_ = es;
      n_sw_ = n_sw;
      n_hw_ = n_hw;
      snprintf(reason_, sizeof reason_, "ok: %d software, %d hardware events%s", n_sw, n_hw,
               n_hw ? "" : " (hardware counters absent)");
      return Status::kOk;
    }
    s = fail(Status::kUnsupported, step, p.strerror(r));
    p.cleanup_eventset(es);
    p.destroy_eventset(&es);
    if (n_hw == 0) break;  // the retry without hardware events would be the same
  }
  return s;
}

Status Papi::read(PapiValues* out) {
  if (!out) return Status::kError;
  if (!is_open()) return Status::kUnsupported;
  long long v[kSlots] = {0};
  int r = api_->read(eventset_, v);
  if (r != PAPI_OK) return Status::kError;
  auto get = [&](int slot) -> uint64_t {
    int i = slot_of_[slot];
    return i >= 0 && v[i] > 0 ? static_cast<uint64_t>(v[i]) : 0;
  };
  PapiValues pv;
  pv.have_software = n_sw_ > 0;
  pv.have_hardware = n_hw_ > 0;
  pv.context_switches = get(kCtxSw);
  pv.cpu_migrations = get(kMigr);
  pv.task_clock_ns = get(kTaskClock);
  pv.cycles = get(kCycles);
  pv.instructions = get(kInstr);
  *out = pv;
  return Status::kOk;
}

void Papi::close() {
  if (!is_open()) return;
  long long v[kSlots];
  api_->stop(eventset_, v);
  api_->cleanup_eventset(eventset_);
  api_->destroy_eventset(&eventset_);
  eventset_ = -1;
}

#else  // no papi.h at build time: the backend is compiled out and says so.

struct Papi::Api {};
Status Papi::open(const char*) {
  return fail(Status::kUnsupported, "built without papi.h (libpapi-dev)", nullptr);
}
Status Papi::read(PapiValues* out) {
  return out ? Status::kUnsupported : Status::kError;
}
void Papi::close() {}
Status Papi::fail(Status s, const char* what, const char* detail) {
  const char* sep = detail ? ": " : "";
  snprintf(reason_, sizeof reason_, "%.90s%s%.160s", what, sep, detail ? detail : "");
  return s;
}

#endif

void Papi::forget() {
  eventset_ = -1;
  snprintf(reason_, sizeof reason_, "%s", "forked child: PAPI is not re-initialised");
}

}  // namespace pw::counters
