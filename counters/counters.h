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
//  - libpapi is never linked: it is dlopen'ed RTLD_LOCAL by Sampler::start, on the calling thread
//    and only while that is the process's only thread, so a process that never starts a sampler
//    never pays for it, and no libpapi code runs beside the host's threads.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace pw::counters {

// Statuses returned here: kOk, kUnsupported, kError, kBusy (already running), kPending (not
// known yet: the sampler thread is still initialising).
using Status = pw::Status;

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
  uint8_t idle = 0;           // reads in a row that found it unchanged (saturates at 2)
  bool carried = false;       // not read this time: run_ns/wait_ns carried over from `prev`
  cpu_set_t allowed;          // its affinity mask (first CPU_SETSIZE CPUs)
};

struct ProcReadOptions {
  bool detail = true;  // also read cpu (stat) and the affinity mask; off = schedstat only
  pid_t skip_tid = 0;  // a thread to leave out (the sampler itself)
  // The previous read (sorted by tid), to skip idle threads: a thread found
  // unchanged once is read again every 8th call, twice or more every 64th,
  // its values carried over meanwhile, so the cost follows the threads that
  // run, not the threads that exist. nullptr = read every thread.
  const ThreadStat* prev = nullptr;
  size_t n_prev = 0;
  uint64_t round = 0;     // a counter that advances by one per call
  bool read_all = false;  // read every thread this time (idle counts still kept)
};

// Reads every thread of this process into out[0..cap). *n = threads read, *total = threads
// present (> *n when cap was too small). Uses open/read/getdents64 into stack buffers only: no
// allocation, safe to call from any thread. Threads that exit mid-read are skipped.
// *read (optional) = how many threads' files were actually read.
// kUnsupported: /proc/self/task or schedstat missing (no CONFIG_SCHED_INFO).
Status proc_read_threads(const ProcReadOptions& opt, ThreadStat* out, size_t cap, size_t* n,
                         size_t* total, size_t* read = nullptr);

// Whether thread tid of this process is blocked waiting for events now: in epoll_wait, poll,
// select or one of their variants (an event loop between two events), from
// /proc/self/task/<tid>/syscall. No allocation. kUnsupported: the file cannot be read (the
// thread exited, a kernel without it); *out is then left alone.
Status thread_waits_for_events(pid_t tid, bool* out);

// Whether this process holds a listening socket (TCP or TCP6 in LISTEN, or a
// Unix stream socket that accepts connections): it serves connections, as a
// model server does. Its socket descriptors from /proc/self/fd (the first 64),
// matched against /proc/self/net/{tcp,tcp6,unix} (each read up to 4 MiB). No
// allocation. kUnsupported: /proc/self/fd cannot be read; *out is then left alone.
Status process_listens(bool* out);

// ---- PAPI backend: perf_event counters inherited by every later thread ----------------------

struct PapiValues {
  bool have_software = false;  // context switches, migrations, task clock are valid
  bool have_hardware = false;  // at least one hardware event is valid (absent in VMs without a PMU)
  uint64_t context_switches = 0;
  uint64_t cpu_migrations = 0;
  uint64_t task_clock_ns = 0;
  uint64_t cycles = 0;
  uint64_t instructions = 0;
  uint64_t stall_cycles = 0;  // backend stall cycles, where the PMU has them
  uint64_t cache_misses = 0;
};

// The counters, as PAPI's perf_event component allows them here (papi.cpp says why they are
// opened with perf_event_open rather than through a PAPI event set).
class Papi {
 public:
  // Only while the calling thread is the process's only thread (else kUnsupported, reason says
  // so): dlopen(library, RTLD_NOW|RTLD_LOCAL) (nullptr = "libpapi.so.7.0"), PAPI_library_init
  // (honouring PAPI_DISABLE_COMPONENTS, which PAPI 7.0 itself ignores), the perf_event
  // component's state and which of its events exist; once per process. Then one counter per
  // known event, inherited by every thread and child process created afterwards. kUnsupported
  // with reason() saying why when libpapi is missing, the host loaded its own libpapi, the
  // component is disabled, it knows no event, or the kernel refuses them all.
  // verdict: what PAPI decided, as a short text the caller keeps for this boot. On entry the
  // kept one, or "": when its key (the boot id, the library, perf_event_paranoid and every
  // PAPI_* / LIBPFM_* variable) is this process's, libpapi is not loaded at all and the same
  // counters are opened (PAPI_library_init costs ~2 ms of the first pthread_create). When
  // libpapi was asked instead, *verdict is replaced by the new text to keep ("" when it has
  // no key). nullptr: decided here, nothing to keep.
  Status open(const char* library, std::string* verdict = nullptr);
  // Where open() got PAPI's verdict: "libpapi" (asked now), "cached" (this boot's file), ""
  // (not asked: another thread ran, or the verdict was taken earlier in this process).
  const char* verdict_from() const { return verdict_from_; }
  // Cumulative counts since open(), over the opener and its descendants (live or exited).
  // read(2) only: callable from one thread at a time, runs no libpapi code. kError (and the
  // counters are dropped for good) when a descriptor no longer names our event: the host closed
  // or reused it; a host's file is never read.
  Status read(PapiValues* out);
  void close();   // closes the counters still ours; libpapi stays loaded (never dlclose'd)
  void forget();  // in a fork()ed child: close the copies of the parent's counters
  bool is_open() const { return open_; }
  const char* reason() const { return reason_; }
  const char* names() const { return names_; }  // the events counted, space-separated

 private:
  Status fail(Status s, const char* what, const char* detail);
  bool still_ours(int slot) const;
  bool open_ = false;
  int fd_[7] = {-1, -1, -1, -1, -1, -1, -1};
  uint64_t id_[7] = {};
  int n_sw_ = 0, n_hw_ = 0;
  char names_[200] = "";
  char reason_[256] = "not opened";
  const char* verdict_from_ = "";
};

// The PAPI library that Papi::open dlopens by default, by soname.
inline constexpr char kPapiLibrary[] = "libpapi.so.7.0";

// ---- The sampler thread ----------------------------------------------------------------------

// The host's real pthread_create (the preload passes the one it interposes on, so the sampler is
// not governed, pinned or counted by our own hook). The one spelling of its type: hooks/ and
// runtime/ use this one.
using ThreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

// A process with more than kThreadsPerPeriod threads is sampled every
// ceil(threads / kThreadsPerPeriod) periods: each sample lists every thread
// (/proc/self/task), reads the inherited counters (the kernel sums every
// thread's) and the process's CPU time, all in time per thread, so without the
// stretch the monitor's cost grows with idle threads (2000 idle threads: 4.5%
// of a core at 100 ms). Its reaction time grows with the stretch instead.
inline constexpr size_t kThreadsPerPeriod = 100;
inline unsigned sample_stretch(size_t threads) {
  return threads <= kThreadsPerPeriod
             ? 1u
             : static_cast<unsigned>((threads + kThreadsPerPeriod - 1) / kThreadsPerPeriod);
}

struct SamplerOptions {
  unsigned period_ms = 100;             // clamped to [5, 60000]
  bool use_papi = true;                 // false: /proc only, libpapi is never loaded; true: the
                                        // counters are opened by start() on the calling thread
                                        // if it is the only one (see Papi::open)
  const char* papi_library = nullptr;   // nullptr = "libpapi.so.7.0"; a test may pass a bogus name
  std::string* papi_verdict = nullptr;  // Papi::open's verdict (nullptr: none)
  unsigned detail_every = 10;           // per-thread cpu + affinity every Nth sample; 0 = never
  size_t max_threads = 1024;            // capacity of the per-thread tables (made by the thread)
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
  PapiValues papi;                 // deltas (the sampler's own task clock and switches taken
                                   // out); have_* false when PAPI is not in use
  const ThreadStat* thread = nullptr;  // per-thread state now (valid during the callback only)
  size_t n_thread = 0;
  bool detail = false;      // this sample has per-thread cpu + affinity
  size_t thread_reads = 0;  // threads whose /proc files were read (idle ones are skipped)
};

// Called on the sampler thread after each interval. Keep it short and non-blocking: the next
// interval starts when it returns, and stop() waits for it.
using SampleFn = void (*)(const Sample& s, void* user);

struct SamplerInfo {
  bool running = false;
  bool papi_used = false;  // PAPI counters are in the samples
  uint64_t samples = 0;
  uint32_t period_ms = 0;
  const char* backend = "proc";   // "papi+proc" or "proc"
  const char* papi_reason = "";   // why PAPI is not used (or "ok"); stable while the Sampler lives
  const char* papi_verdict = "";  // "libpapi" (asked here), "cached" (this boot's), "" (not asked)
  const char* counters = "";      // the PAPI events counted, space-separated ("" without PAPI)
  uint64_t papi_open_ns = 0;      // what opening PAPI cost start()'s caller (0 if not tried)
  int64_t sampler_tid = 0;        // 0 when not running
  uint64_t thread_reads = 0;      // threads' /proc files read over all samples
};

class Sampler {
 public:
  Sampler() = default;
  ~Sampler();  // stops if running
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // With use_papi, opens the counters first, on the calling thread (Papi::open: only if it is the
  // process's only thread). Then starts the thread "parwidth-mon" with every signal blocked (the
  // host's handlers never run on it). create may be nullptr (= pthread_create).
  // kBusy if running; kError if the thread could not be made. Its per-thread
  // tables are allocated on that thread (out of memory there: it takes no samples).
  Status start(const SamplerOptions& opt, ThreadCreateFn create, SampleFn fn, void* user);
  // Wakes the thread (condition variable), joins it, closes PAPI. Returns within about one
  // callback's time.
  // kUnsupported if not running. Must not be called from the callback.
  Status stop();
  // In a fork()ed child: the thread does not exist there. Drops the state without joining or
  // calling PAPI, closes our fds; the child may start() again (PAPI then stays off).
  void reset_after_fork();
  // kPending until the thread runs (sampler_tid known), kOk after; the PAPI fields are final as
  // soon as start() returned (info is filled in both cases).
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
  std::atomic<uint64_t> thread_reads_{0};
  std::atomic<int64_t> tid_{0};
  ThreadStat* bufs_[2] = {nullptr, nullptr};
  Papi papi_;
  char papi_reason_[256] = "not started";
  uint64_t papi_open_ns_ = 0;
};

}  // namespace pw::counters
