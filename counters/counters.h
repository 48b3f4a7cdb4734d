// counters/: the one interface to this process's scheduling behaviour (/proc, and PAPI if usable).
//
// Contract, for every function declared here (mimalloc / hwloc style):
//  - It returns a Status; results come back through out-parameters, which are written only when
//    the status is kOk (or, for info queries, as documented on the function).
//  - kUnsupported means "this machine / build / process cannot give it" (PAPI absent, its
//    perf_event component disabled, /proc missing): a normal outcome, callers fall back.
//    kError means a call that should have worked failed (bad argument, resource exhausted).
//  - Nothing throws, prints, aborts or installs signal handlers. Nothing is exported: the
//    preload links this statically and compiles it -fvisibility=hidden.
//  - libpapi is never linked: it is dlopen'ed RTLD_LOCAL by the sampler thread when PAPI is
//    enabled, so a process that never starts a sampler never pays for it.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace pw::counters {

enum class Status : int {
  kOk = 0,
  kUnsupported = 1,  // not available here: fall back, this is not a failure
  kError = 2,        // bad argument or a failed system call that should have worked
  kBusy = 3,         // already running / already started
  kPending = 4,      // not known yet (the sampler thread is still initialising)
};
const char* status_name(Status s);

// ---- /proc backend: per-thread scheduling state of this process ------------------------------

// One thread of this process: /proc/self/task/<tid>/schedstat, and with detail its stat and
// sched_getaffinity. Per-thread switch counts are not read: /proc/<tid>/status costs ~3x a
// schedstat read, and the process-wide count comes from one getrusage call.
struct ThreadStat {
  pid_t tid = 0;
  uint64_t run_ns = 0;        // schedstat field 1: time on a CPU
  uint64_t wait_ns = 0;       // schedstat field 2: runnable but waiting on a run queue
  int cpu = -1;               // stat field 39: CPU it last ran on (-1 when not read)
  bool have_allowed = false;  // `allowed` is valid (detail reads only)
  cpu_set_t allowed;          // its affinity mask (first CPU_SETSIZE CPUs)
};

struct ProcReadOptions {
  bool detail = true;  // also read cpu (stat) and the affinity mask; off = schedstat only
  pid_t skip_tid = 0;  // a thread to leave out (the sampler itself)
};

// Reads every thread of this process into out[0..cap). *n = threads read, *total = threads
// present (> *n when cap was too small). Uses open/read/getdents64 into stack buffers only: no
// allocation, safe to call from any thread. Threads that exit mid-read are skipped.
// kUnsupported: /proc/self/task or schedstat missing (no CONFIG_SCHED_INFO).
Status proc_read_threads(const ProcReadOptions& opt, ThreadStat* out, size_t cap, size_t* n,
                         size_t* total);

// ---- PAPI backend (perf_event component, process-wide software events) ----------------------

struct PapiValues {
  bool have_software = false;  // the three perf:: software events below are valid
  bool have_hardware = false;  // cycles / instructions are valid (absent in VMs without a PMU)
  uint64_t context_switches = 0;
  uint64_t cpu_migrations = 0;
  uint64_t task_clock_ns = 0;
  uint64_t cycles = 0;
  uint64_t instructions = 0;
};

// PAPI as used here. Every method must be called from one thread (the sampler's): PAPI keeps
// per-thread state and we do not call PAPI_thread_init, so no other thread of the host is touched.
class Papi {
 public:
  // dlopen(library, RTLD_NOW|RTLD_LOCAL) (nullptr = "libpapi.so.7.0"), PAPI_library_init, and an
  // event set on the perf_event component attached to the main thread with PAPI_INHERIT_ALL, so
  // that it counts the main thread and every thread (or child process) created after this call.
  // No overflow, no multiplexing: PAPI installs no signal handler. kUnsupported with reason()
  // saying why when libpapi is missing, the host already loaded its own libpapi, the component is
  // disabled, or no software event could be started.
  Status open(const char* library);
  // Cumulative counts since open().
  Status read(PapiValues* out);
  // Stops counting and frees the event set. libpapi stays loaded (never dlclose'd: PAPI leaves
  // thread-specific data and atexit state that would dangle).
  void close();
  // Forget everything without calling PAPI (in a fork()ed child the owning thread is gone).
  void forget();
  bool is_open() const { return eventset_ >= 0; }
  const char* reason() const { return reason_; }

  struct Api;  // the dlsym'ed PAPI entry points (defined in papi.cpp)

 private:
  Status fail(Status s, const char* what, const char* detail);
  const Api* api_ = nullptr;
  int eventset_ = -1;
  int n_sw_ = 0, n_hw_ = 0;
  int slot_of_[5] = {-1, -1, -1, -1, -1};  // event-set index of each counter, -1 = absent
  char reason_[256] = "not opened";
};

// ---- The sampler thread ----------------------------------------------------------------------

// The host's real pthread_create (the preload passes the one it interposes on, so the sampler is
// not governed, pinned or counted by our own hook).
using ThreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

struct SamplerOptions {
  unsigned period_ms = 100;            // clamped to [5, 60000]
  bool use_papi = true;                // false: /proc only, libpapi is never loaded
  const char* papi_library = nullptr;  // nullptr = "libpapi.so.7.0"; a test may pass a bogus name
  unsigned detail_every = 10;          // per-thread cpu + affinity every Nth sample; 0 = never
  size_t max_threads = 1024;           // capacity of the per-thread tables, allocated at start
};

// One sampling interval. Deltas are over [t_ns - dt_ns, t_ns]; counts of threads that exited
// during the interval are lost for that interval (they are never negative).
struct Sample {
  uint64_t seq = 0;                // 1, 2, ... (the baseline read is not reported)
  uint64_t t_ns = 0;               // CLOCK_MONOTONIC at the end of the interval
  uint64_t dt_ns = 0;              // interval length
  uint64_t runq_wait_ns = 0;       // sum over threads of run-queue delay added (schedstat)
  uint64_t invol_switches = 0;     // process's involuntary switches added (getrusage), sampler's
                                   // own excluded; includes threads that exited meanwhile
  uint64_t cpu_time_ns = 0;        // process CPU time added, the sampler's own excluded
  uint64_t sampler_cpu_ns = 0;     // the sampler thread's own CPU time in this interval
  uint32_t threads = 0;            // threads present now, the sampler excluded
  bool threads_truncated = false;  // more threads than max_threads: sums cover the first ones
  PapiValues papi;                 // deltas; have_* false when PAPI is not in use
  const ThreadStat* thread = nullptr;  // per-thread state now (valid during the callback only)
  size_t n_thread = 0;
  bool detail = false;  // this sample has per-thread cpu + affinity
};

// Called on the sampler thread after each interval. Keep it short and non-blocking: the next
// interval starts when it returns, and stop() waits for it.
using SampleFn = void (*)(const Sample& s, void* user);

struct SamplerInfo {
  bool running = false;
  bool papi_used = false;  // PAPI counters are in the samples
  uint64_t samples = 0;
  uint32_t period_ms = 0;
  const char* backend = "proc";  // "papi+proc" or "proc"
  const char* papi_reason = "";  // why PAPI is not used (or "ok"); stable while the Sampler lives
  int64_t sampler_tid = 0;       // 0 when not running
};

class Sampler {
 public:
  Sampler() = default;
  ~Sampler();  // stops if running
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Starts the thread "parwidth-mon" with every signal blocked (the host's handlers never run on
  // it). create may be nullptr (= pthread_create). Does not wait for PAPI to initialise.
  // kBusy if running; kError if the thread or its buffers could not be made.
  Status start(const SamplerOptions& opt, ThreadCreateFn create, SampleFn fn, void* user);
  // Wakes the thread (condition variable), joins it, closes PAPI. Returns within about one
  // callback's time.
  // kUnsupported if not running. Must not be called from the callback.
  Status stop();
  // In a fork()ed child: the thread does not exist there. Drops the state without joining or
  // calling PAPI, closes our fds; the child may start() again (PAPI then stays off).
  void reset_after_fork();
  // kPending while the thread has not finished deciding on PAPI, kOk after (info is filled in
  // both cases).
  Status info(SamplerInfo* out) const;

 private:
  static void* thread_main(void* self);
  void run();

  SamplerOptions opt_{};
  SampleFn fn_ = nullptr;
  void* user_ = nullptr;
  pthread_t thread_{};
  // No fd for waking: a host that closes "all fds" (daemons) must not find one of ours.
  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake_{};  // CLOCK_MONOTONIC, set up in start()
  bool stop_requested_ = false;
  bool running_ = false;
  bool forked_ = false;
  std::atomic<bool> ready_{false};
  std::atomic<bool> papi_used_{false};
  std::atomic<uint64_t> samples_{0};
  std::atomic<int64_t> tid_{0};
  ThreadStat* bufs_[2] = {nullptr, nullptr};
  Papi papi_;
  char papi_reason_[256] = "not started";
};

}  // namespace pw::counters
