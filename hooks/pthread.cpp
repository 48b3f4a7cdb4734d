// hooks/pthread: pthread_create — each new thread gets a pool and a core, and
// pins itself in a trampoline before the creator's start routine runs.
#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "governor/pin.h"
#include "hooks/blas.h"
#include "hooks/creator.h"
#include "hooks/fail_open.h"
#include "hooks/guard.h"
#include "hooks/omp.h"
#include "hooks/slots.h"
#include "runtime/api.h"
#include "topology/affinity.h"

namespace pw::hooks {

__thread bool t_inside __attribute__((tls_model("initial-exec"))) = false;

namespace {

struct Start {
  void* (*fn)(void*);
  void* arg;
  gov::Assignment where;
  gov::PinVerdict verdict;  // governor/pin's, from the facts prepare() gathered
  bool prepinned;           // its affinity came with its attributes: it started on its core
  std::string creator;
};

// Sets the calling thread's affinity; returns 0 or an errno.
int pin_self(const std::vector<int>& cpus) {
  return topo::affinity_set(0, cpus);
}

// True if the creator gave the thread an affinity of its own in its attributes.
bool attr_has_affinity(const pthread_attr_t* attr) {
  if (!attr) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_attr_getaffinity_np(attr, sizeof set, &set) != 0) return false;
  return CPU_COUNT(&set) != CPU_SETSIZE;
}

// A thread we pinned is checked as it exits (a thread-specific value's
// destructor runs whether its start routine returns or it calls
// pthread_exit): an OpenMP runtime's own binding may have moved it since.
pthread_key_t g_pin_check_key;
bool g_pin_check_ok = false;
pthread_once_t g_pin_check_once = PTHREAD_ONCE_INIT;

void pin_check_at_exit(void*) {
  Guard guard;
  if (!guard.entered()) return;
  fail_open("pin-check", [&] { rt::own_pin_check(); });
}

void pin_check_arm() {
  pthread_once(&g_pin_check_once, [] {
    g_pin_check_ok = pthread_key_create(&g_pin_check_key, pin_check_at_exit) == 0;
  });
  if (g_pin_check_ok) pthread_setspecific(g_pin_check_key, reinterpret_cast<void*>(1));
}

// dst = the attributes that `src` (nullptr: the process's defaults) gives a
// thread. False when they cannot be copied faithfully (a stack of the
// caller's own): then the thread pins itself once it runs.
bool attr_copy(const pthread_attr_t* src, pthread_attr_t* dst) {
  if (!src) return pthread_getattr_default_np(dst) == 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  void* stackaddr = nullptr;
  if (pthread_attr_getstackaddr(src, &stackaddr) != 0 || stackaddr) return false;
#pragma GCC diagnostic pop
  if (pthread_attr_init(dst) != 0) return false;
  int v = 0;
  size_t sz = 0;
  struct sched_param param;
  sigset_t mask;
  bool ok = pthread_attr_getdetachstate(src, &v) == 0 && pthread_attr_setdetachstate(dst, v) == 0;
  ok = ok && pthread_attr_getguardsize(src, &sz) == 0 && pthread_attr_setguardsize(dst, sz) == 0;
  ok = ok && pthread_attr_getstacksize(src, &sz) == 0 && pthread_attr_setstacksize(dst, sz) == 0;
  ok = ok && pthread_attr_getscope(src, &v) == 0 && pthread_attr_setscope(dst, v) == 0;
  ok = ok && pthread_attr_getschedpolicy(src, &v) == 0 && pthread_attr_setschedpolicy(dst, v) == 0;
  ok = ok && pthread_attr_getschedparam(src, &param) == 0 &&
       pthread_attr_setschedparam(dst, &param) == 0;
  ok =
      ok && pthread_attr_getinheritsched(src, &v) == 0 && pthread_attr_setinheritsched(dst, v) == 0;
  if (ok) {
    const int m = pthread_attr_getsigmask_np(src, &mask);
    ok = m == PTHREAD_ATTR_NO_SIGMASK_NP || (m == 0 && pthread_attr_setsigmask_np(dst, &mask) == 0);
  }
  if (!ok) pthread_attr_destroy(dst);
  return ok;
}

// Attributes like the creator's with the thread's CPUs added: the thread
// then starts on its core, instead of on its creator's and migrating there
// once it runs (most of what pinning used to add to pthread_create).
bool attr_with_cpus(const pthread_attr_t* src, const std::vector<int>& cpus, pthread_attr_t* dst) {
  if (cpus.empty() || !attr_copy(src, dst)) return false;
  if (topo::affinity_attr_set(dst, cpus) != 0) {
    pthread_attr_destroy(dst);
    return false;
  }
  return true;
}

void* trampoline(void* p) {
  Start* s = static_cast<Start*>(p);
  void* (*fn)(void*) = s->fn;
  void* arg = s->arg;
  {
    Guard guard;
    rt::current_pool_set(s->where.pool);
    gov::ThreadRecord rec;
    rec.tid = static_cast<long>(gettid());
    rec.pool = s->where.pool;
    rec.cpu = s->where.cpu;
    rec.generation = s->where.generation;
    std::vector<int> cpus;
    if (s->prepinned) {
      rec.pinned = true;
    } else if (s->verdict.pin && rt::cpus_for(s->where, &cpus)) {
      int err = pin_self(cpus);
      rec.pinned = err == 0;
      if (err) rec.pin_error = strerror(err);
      if (rec.pinned) pin_check_arm();
    } else if (s->verdict.why) {
      rec.pin_error = s->verdict.why;
      if (s->verdict.widen && !rt::process_cpus().empty()) pin_self(rt::process_cpus());
    }
    fail_open("trampoline", [&] {
      rec.creator = std::move(s->creator);
      rt::thread_record(rec);
      if (rec.pinned) rt::thread_catch_up(rec.tid, rec.generation);
    });
    s->~Start();
    free(s);
  }
  return fn(arg);
}

}  // namespace

bool called_from_main_program(const void* pc) {
  const char* name = object_name_of(pc);
  return name && *name == '\0';
}

namespace {

// The hook's work is split so that little of it stays on the caller's stack
// while the original runs (a thread with a small stack creates threads too):
// the decisions run in prepare(), whose frame is gone before the original is
// called, and only create_governed()'s attributes and pointers stay beneath it.

// Takes a pool and a core for the thread and the attributes that pin it
// there. nullptr: create it as the host asked.
__attribute__((noinline)) Start* prepare(const pthread_attr_t* attr, void* (*start)(void*),
                                         void* arg, const void* caller, pthread_attr_t* own) {
  void* mem = malloc(sizeof(Start));
  if (!mem) return nullptr;
  Start* s = nullptr;
  const bool ok = fail_open("thread-start", [&] {
    s = new (mem) Start{start, arg, {}, {}, false, {}};
    s->where = rt::thread_assign(rt::current_pool());
    gov::PinFacts facts;
    facts.governing = rt::governing();
    facts.pin_off = rt::pin_mode() == gov::PinMode::kNone;
    facts.user_affinity = attr_has_affinity(attr);
    const char* left = nullptr;
    facts.runtime_binding = omp_thread_left_to_runtime(caller, &left);
    facts.creator_in_pool = rt::current_pool() >= 0;
    s->verdict = gov::pin_verdict(facts);
    s->creator = creator_of(caller);
  });
  if (!ok) {
    if (s) s->~Start();
    free(mem);
    return nullptr;
  }
  // On failure the thread pins itself once it runs.
  fail_open("thread-attributes", [&] {
    std::vector<int> cpus;
    s->prepinned =
        s->verdict.pin && rt::cpus_for(s->where, &cpus) && attr_with_cpus(attr, cpus, own);
  });
  return s;
}

__attribute__((noinline)) void start_free(Start* s) {
  s->~Start();
  free(s);
}

// The governed path: a Start for the trampoline, then the original.
__attribute__((noinline)) int create_governed(counters::ThreadCreateFn real, pthread_t* thread,
                                              const pthread_attr_t* attr, void* (*start)(void*),
                                              void* arg, const void* caller) {
  pthread_attr_t own;
  Start* s = prepare(attr, start, arg, caller, &own);
  if (!s) return real(thread, attr, start, arg);
  const bool with_cpus = s->prepinned;
  int rc = real(thread, with_cpus ? &own : attr, trampoline, s);
  if (with_cpus) {
    pthread_attr_destroy(&own);
    // The CPUs were refused (the process's affinity changed meanwhile): as
    // the host asked, and the thread tries to pin itself.
    if (rc != 0) {
      s->prepinned = false;
      rc = real(thread, attr, trampoline, s);
    }
  }
  if (rc != 0) start_free(s);
  return rc;
}

__attribute__((noinline)) void main_program_sweep(const void* caller) {
  // The main program's own code runs after every library it linked has been
  // initialised, and outside any dlopen: the moment to cap the BLAS pools
  // that came with it (C programs; Python's are swept after each import).
  if (called_from_main_program(caller)) blas_sweep("at a thread start in the main program");
}

}  // namespace
}  // namespace pw::hooks

using pw::hooks::Guard;

PW_HOOK(int, pthread_create,
        (pthread_t * thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg)) {
  const void* caller = __builtin_return_address(0);
  auto real = PW_REAL_AT(pthread_create, caller);
  if (!real) return PW_MISSING(pthread_create);
  if (pw::rt::selected()) pw::hooks::main_program_sweep(caller);
  Guard guard;
  if (!guard.entered() || !pw::rt::selected() || !pw::rt::ensure_active())
    return real(thread, attr, start, arg);
  return pw::hooks::create_governed(real, thread, attr, start, arg, caller);
}
