// counters/papi.cpp: PAPI's perf_event component says where counting works and which events
// exist; the counters themselves are perf_event_open(2) descriptors that inherit into every thread.
//
// Why not PAPI_attach + PAPI_INHERIT: PAPI 7.0's perf_event component validates every attach,
// inherit, granularity and multiplex request by opening PERF_COUNT_HW_INSTRUCTIONS on the target
// (check_permissions() in src/components/perf_event/perf_event.c, unchanged upstream). Where the
// machine has no hardware PMU (a KVM guest: "using software events only") that open fails with
// ENOENT, which PAPI reports as PAPI_ENOEVNT, "Event does not exist", although the component is
// active and its perf:: software events count. Without attach or inherit a PAPI event set counts
// only the thread that created it. So PAPI is used for what it does right, once, while the process
// is single-threaded (library and component initialisation, which events exist here), and the
// counters are opened with inherit = 1 on that only thread: they count it and every thread (and
// child process) created afterwards, which is what attach + inherit on the main thread would have
// counted. After open() no libpapi or libpfm code runs again: read() is read(2) on our fds, from
// any thread.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "counters/counters.h"
#include "counters/fd.h"
#include "counters/task_dir.h"

#if __has_include(<papi.h>)
#include <papi.h>
#define PW_HAVE_PAPI_H 1
#endif

namespace pw::counters {

namespace {

constexpr const char* kDefaultLibrary = kPapiLibrary;

enum Slot {
  kCtxSw,
  kMigr,
  kTaskClock,
  kCycles,
  kInstr,
  kStall,
  kCacheMiss,
  kSlots,
};

// Each counter: the name PAPI must know for it to be used (its perf_event component, through
// libpfm4, decides), and what perf_event_open counts for it.
struct Event {
  Slot slot;
  const char* papi_name;
  uint32_t type;
  uint64_t config;
  bool hardware;
};
constexpr Event kEvents[] = {
    {kCtxSw, "perf::CONTEXT-SWITCHES", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
    {kMigr, "perf::CPU-MIGRATIONS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false},
    {kTaskClock, "perf::TASK-CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
    {kCycles, "perf::CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
    {kInstr, "perf::INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true},
    {kStall, "perf::STALLED-CYCLES-BACKEND", PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true},
    {kCacheMiss, "perf::CACHE-MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true},
};

// Threads of this process now (/proc/self/task entries), -1 if unknown. No allocation.
[[maybe_unused]] int thread_count() {
  int fd = fd_above_stdio(open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd < 0) return -1;
  int n = 0;
  task_dir_each(fd, [&](const char*) { ++n; });
  close(fd);
  return n;
}

[[maybe_unused]] int perf_open(const Event& e, bool user_only) {
  perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = e.type;
  a.config = e.config;
  a.inherit = 1;
  a.exclude_hv = 1;
  a.exclude_kernel = user_only ? 1 : 0;
  return fd_above_stdio(static_cast<int>(
      syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC)));
}

#if PW_HAVE_PAPI_H

struct Api {
  decltype(&PAPI_library_init) library_init;
  decltype(&PAPI_is_initialized) is_initialized;
  decltype(&PAPI_disable_component_by_name) disable_component_by_name;
  decltype(&PAPI_disable_component) disable_component;
  decltype(&PAPI_num_components) num_components;
  decltype(&PAPI_get_component_index) get_component_index;
  decltype(&PAPI_get_component_info) get_component_info;
  decltype(&PAPI_query_named_event) query_named_event;
  decltype(&PAPI_strerror) strerror;
};

template <typename F>
bool bind(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  return *out != nullptr;
}

// What PAPI said, decided once per process (libpapi is initialised once and never called again).
struct Decision {
  bool done = false;
  char library[128] = "";
  bool usable = false;
  bool known[kSlots] = {};
  char reason[200] = "";
};
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
Decision g_decision;

// PAPI 7.0 ignores PAPI_DISABLE_COMPONENTS (7.1 reads it): honour it the way 7.1 does, through
// PAPI_disable_component_by_name before the library is initialised. Comma-separated names.
void disable_listed_components(const Api& p) {
  const char* list = getenv("PAPI_DISABLE_COMPONENTS");
  if (!list) return;
  char name[64];
  for (const char* s = list; *s;) {
    const char* e = s;
    while (*e && *e != ',') ++e;
    size_t len = static_cast<size_t>(e - s);
    if (len > 0 && len < sizeof name) {
      memcpy(name, s, len);
      name[len] = '\0';
      p.disable_component_by_name(name);
    }
    s = *e ? e + 1 : e;
  }
}

// Loads libpapi, initialises it and asks which events exist. Called on the only thread.
void decide(const char* library, Decision* d) {
  d->done = true;
  snprintf(d->library, sizeof d->library, "%s", library);
  // A host that uses PAPI itself owns its global state (library init, thread ids): keep out.
  if (void* mine = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    dlclose(mine);
    snprintf(d->reason, sizeof d->reason, "%s",
             "the host process already loaded libpapi; not sharing its state");
    return;
  }
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    snprintf(d->reason, sizeof d->reason, "dlopen %.80s failed: %.100s", library, e ? e : "?");
    return;
  }
  Api p{};
  bool ok = bind(h, "PAPI_library_init", &p.library_init) &&
            bind(h, "PAPI_is_initialized", &p.is_initialized) &&
            bind(h, "PAPI_disable_component_by_name", &p.disable_component_by_name) &&
            bind(h, "PAPI_disable_component", &p.disable_component) &&
            bind(h, "PAPI_num_components", &p.num_components) &&
            bind(h, "PAPI_get_component_index", &p.get_component_index) &&
            bind(h, "PAPI_get_component_info", &p.get_component_info) &&
            bind(h, "PAPI_query_named_event", &p.query_named_event) &&
            bind(h, "PAPI_strerror", &p.strerror);
  if (!ok) {
    dlclose(h);  // nothing of it ran yet, so unloading is safe
    snprintf(d->reason, sizeof d->reason, "%s", "libpapi lacks a required PAPI_* symbol");
    return;
  }
  // Never dlclose'd from here on: PAPI leaves thread-specific data and atexit state behind.
  if (p.is_initialized() == PAPI_NOT_INITED) {
    disable_listed_components(p);
    // Only perf_event is used: the others (uncore, sde, GPU components that dlopen their own
    // libraries, sysdetect) would cost the first pthread_create ~10 ms more here and load code.
    for (int c = 0, n = p.num_components(); c < n; ++c) {
      const PAPI_component_info_t* ci = p.get_component_info(c);
      if (ci && strcmp(ci->name, "perf_event") != 0) p.disable_component(c);
    }
    int v = p.library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
      snprintf(d->reason, sizeof d->reason, "PAPI_library_init failed: %.100s",
               v < 0 ? p.strerror(v) : "version mismatch");
      return;
    }
  }
  int cidx = p.get_component_index("perf_event");
  const PAPI_component_info_t* ci = cidx >= 0 ? p.get_component_info(cidx) : nullptr;
  if (!ci) {
    snprintf(d->reason, sizeof d->reason, "%s", "PAPI has no perf_event component");
    return;
  }
  if (ci->disabled) {
    snprintf(d->reason, sizeof d->reason, "PAPI perf_event component disabled: %.150s",
             ci->disabled_reason);
    return;
  }
  int n = 0;
  for (const Event& e : kEvents) {
    d->known[e.slot] = p.query_named_event(e.papi_name) == PAPI_OK;
    n += d->known[e.slot];
  }
  if (n == 0) {
    snprintf(d->reason, sizeof d->reason, "%s",
             "PAPI perf_event component active but it knows none of the perf:: events");
    return;
  }
  d->usable = true;
}

// ---- PAPI's verdict, kept for this boot ----------------------------------------------------

// Appends a small file's first line to `out` (at most `room` bytes in all); false if unreadable.
bool first_line_append(const char* path, char* out, size_t room) {
  int fd = fd_above_stdio(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) return false;
  char buf[128];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  size_t len = strlen(out);
  snprintf(out + len, room - len, "%s", buf);
  return true;
}

// What PAPI's verdict depends on: the boot, the library asked for, the kernel's
// perf_event_paranoid and every PAPI_* and LIBPFM_* variable (they switch components and
// PMUs). false when the key cannot be built whole.
bool verdict_key(const char* library, char* key, size_t room) {
  snprintf(key, room, "boot ");
  if (!first_line_append("/proc/sys/kernel/random/boot_id", key, room)) return false;
  size_t len = strlen(key);
  snprintf(key + len, room - len, " paranoid ");
  if (!first_line_append("/proc/sys/kernel/perf_event_paranoid", key, room)) return false;
  len = strlen(key);
  snprintf(key + len, room - len, " library %s", library);
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, "PAPI_", 5) != 0 && strncmp(*e, "LIBPFM_", 7) != 0) continue;
    len = strlen(key);
    if (len + strlen(*e) + 2 >= room) return false;
    snprintf(key + len, room - len, " %s", *e);
  }
  return strchr(key, '\n') == nullptr;
}

// "parwidth-papi 1\nkey K\nusable 0|1\nknown 1,1,1,0,0,0,0\nreason R\nend\n"
bool verdict_parse(const char* text, const char* key, const char* library, Decision* d) {
  char line_key[1100], reason[200];
  int usable = 0, k[kSlots] = {};
  const char* p = text;
  auto line = [&](char* out, size_t room) {
    const char* nl = strchr(p, '\n');
    if (!nl || static_cast<size_t>(nl - p) >= room) return false;
    memcpy(out, p, static_cast<size_t>(nl - p));
    out[nl - p] = '\0';
    p = nl + 1;
    return true;
  };
  char l[1100];
  if (!line(l, sizeof l) || strcmp(l, "parwidth-papi 1") != 0) return false;
  if (!line(line_key, sizeof line_key) || strncmp(line_key, "key ", 4) != 0 ||
      strcmp(line_key + 4, key) != 0)
    return false;
  if (!line(l, sizeof l) || sscanf(l, "usable %d", &usable) != 1 || (usable != 0 && usable != 1))
    return false;
  if (!line(l, sizeof l) || sscanf(l, "known %d,%d,%d,%d,%d,%d,%d", &k[0], &k[1], &k[2], &k[3],
                                   &k[4], &k[5], &k[6]) != kSlots)
    return false;
  if (!line(l, sizeof l) || strncmp(l, "reason ", 7) != 0 || strlen(l + 7) >= sizeof reason)
    return false;
  memcpy(reason, l + 7, strlen(l + 7) + 1);
  if (!line(l, sizeof l) || strcmp(l, "end") != 0 || *p != '\0') return false;
  Decision c;
  c.done = true;
  snprintf(c.library, sizeof c.library, "%s", library);
  c.usable = usable == 1;
  for (int i = 0; i < kSlots; ++i) {
    if (k[i] != 0 && k[i] != 1) return false;
    c.known[i] = k[i] == 1;
  }
  snprintf(c.reason, sizeof c.reason, "%s", reason);
  *d = c;
  return true;
}

// The verdict as text for verdict_parse; "" when it does not fit one line per field.
std::string verdict_format(const char* key, const Decision& d) {
  if (strchr(d.reason, '\n')) return "";
  std::string t =
      std::string("parwidth-papi 1\nkey ") + key + "\nusable " + (d.usable ? "1" : "0") + "\nknown";
  for (int i = 0; i < kSlots; ++i) t += std::string(i ? "," : " ") + (d.known[i] ? "1" : "0");
  return t + "\nreason " + d.reason + "\nend\n";
}

#endif  // PW_HAVE_PAPI_H

}  // namespace

Status Papi::fail(Status s, const char* what, const char* detail) {
  const char* sep = detail ? ": " : "";
  snprintf(reason_, sizeof reason_, "%.120s%s%.130s", what, sep, detail ? detail : "");
  return s;
}

Status Papi::open(const char* library, std::string* verdict) {
  if (is_open()) return Status::kBusy;
  if (!library) library = kDefaultLibrary;
#if !PW_HAVE_PAPI_H
  (void)library;
  (void)verdict;
  return fail(Status::kUnsupported, "built without papi.h (libpapi-dev)", nullptr);
#else
  // libpapi's and libpfm's initialisation use strtok, getenv and (PAPI_ALLOW_STOLEN) putenv,
  // process-wide libc state that a host thread could be using at the same moment; and inherited
  // counters would miss threads that already run. So: only while this is the only thread.
  int threads = thread_count();
  if (threads != 1) {
    char n[160];
    snprintf(n, sizeof n,
             "%d threads were running (counters are opened only while the calling "
             "thread is the process's only one)",
             threads);
    return fail(Status::kUnsupported, "not initialised", n);
  }
  pthread_mutex_lock(&g_lock);
  if (!g_decision.done) {
    char key[1024];
    const bool keyed = verdict && verdict_key(library, key, sizeof key);
    if (keyed && verdict_parse(verdict->c_str(), key, library, &g_decision)) {
      verdict_from_ = "cached";
    } else {
      decide(library, &g_decision);
      verdict_from_ = "libpapi";
      if (verdict) *verdict = keyed ? verdict_format(key, g_decision) : "";
    }
  }
  Decision d = g_decision;
  pthread_mutex_unlock(&g_lock);
  if (strcmp(d.library, library) != 0) {
    // Another file than the one decided on (tests ask for missing ones): say what it is.
    void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h) h = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      return fail(Status::kUnsupported, "dlopen failed", e ? e : library);
    }
    dlclose(h);
    return fail(Status::kUnsupported, "libpapi was already initialised from", d.library);
  }
  if (!d.usable) return fail(Status::kUnsupported, d.reason, nullptr);

  int opened_sw = 0, opened_hw = 0, denied = 0;
  names_[0] = '\0';
  for (const Event& e : kEvents) {
    fd_[e.slot] = -1;
    if (!d.known[e.slot]) continue;
    int fd = perf_open(e, false);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) fd = perf_open(e, true);  // paranoid >= 2
    if (fd < 0) {
      denied += errno == EACCES || errno == EPERM;
      continue;
    }
    uint64_t id = 0;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
      ::close(fd);
      continue;
    }
    fd_[e.slot] = fd;
    id_[e.slot] = id;
    (e.hardware ? opened_hw : opened_sw)++;
    size_t len = strlen(names_);
    snprintf(names_ + len, sizeof names_ - len, "%s%s", len ? " " : "", e.papi_name);
  }
  if (opened_sw + opened_hw == 0) {
    for (int& fd : fd_) fd = -1;
    return fail(Status::kUnsupported,
                denied ? "perf_event_open refused (perf_event_paranoid?)"
                       : "PAPI knows the events but perf_event_open could not open any",
                nullptr);
  }
  n_sw_ = opened_sw;
  n_hw_ = opened_hw;
  open_ = true;
  snprintf(reason_, sizeof reason_, "ok: %d software, %d hardware events%s", n_sw_, n_hw_,
           n_hw_ ? "" : " (hardware counters absent)");
  return Status::kOk;
#endif
}

// A host may close "all" descriptors (daemons do) and reuse the numbers: a counter is read only
// while its descriptor still names the event we opened (its kernel id), never a host's file.
bool Papi::still_ours(int slot) const {
  uint64_t id = 0;
  return fd_[slot] >= 0 && ioctl(fd_[slot], PERF_EVENT_IOC_ID, &id) == 0 && id == id_[slot];
}

Status Papi::read(PapiValues* out) {
  if (!out) return Status::kError;
  if (!is_open()) return Status::kUnsupported;
  uint64_t v[kSlots] = {0};
  for (int i = 0; i < kSlots; ++i) {
    if (fd_[i] < 0) continue;
    uint64_t x = 0;
    if (!still_ours(i) || ::read(fd_[i], &x, sizeof x) != static_cast<ssize_t>(sizeof x)) {
      close();  // closes only the descriptors that are still ours
      snprintf(reason_, sizeof reason_, "%s",
               "counters lost: the process closed or reused their descriptors; /proc alone");
      return Status::kError;
    }
    v[i] = x;
  }
  PapiValues pv;
  pv.have_software = n_sw_ > 0;
  pv.have_hardware = n_hw_ > 0;
  pv.context_switches = v[kCtxSw];
  pv.cpu_migrations = v[kMigr];
  pv.task_clock_ns = v[kTaskClock];
  pv.cycles = v[kCycles];
  pv.instructions = v[kInstr];
  pv.stall_cycles = v[kStall];
  pv.cache_misses = v[kCacheMiss];
  *out = pv;
  return Status::kOk;
}

void Papi::close() {
  for (int i = 0; i < kSlots; ++i) {
    if (still_ours(i)) ::close(fd_[i]);
    fd_[i] = -1;
  }
  open_ = false;
}

void Papi::forget() {
  // In a fork()ed child the descriptors are copies of the parent's counters: close ours.
  close();
  snprintf(reason_, sizeof reason_, "%s", "forked child: counters are not re-opened");
}

}  // namespace pw::counters
