// counters/sampler.cpp: the "parwidth-mon" thread that turns /proc (and PAPI) reads into deltas.
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <utility>

#include "counters/counters.h"

namespace pw::counters {
namespace {

// pthread_join returns once the kernel has cleared the thread's tid, which it does before it
// takes the thread out of the thread group. A caller that stopped us for a call the kernel
// refuses in a multi-threaded process (unshare(CLONE_NEWUSER)) would still see two threads for
// a moment (EINVAL in about 1 of 20 calls). Wait until a signal can no longer reach the
// thread: it is then out of the group. Bounded: a kernel that keeps it longer gets no more
// than about 100 ms.
void thread_gone_wait(pid_t tid) {
  if (tid <= 0) return;
  const int saved = errno;
  const pid_t pid = getpid();
  for (int i = 0; i < 2000; ++i) {
    if (syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH) break;
    timespec pause{0, 50L * 1000};
    nanosleep(&pause, nullptr);
  }
  errno = saved;
}

uint64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t sub(uint64_t now, uint64_t before) {
  return now > before ? now - before : 0;
}

// getdents order is creation order, nearly sorted by tid: insertion sort is O(n) on it.
void sort_by_tid(ThreadStat* t, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    for (size_t j = i; j > 0 && t[j - 1].tid > t[j].tid; --j) std::swap(t[j - 1], t[j]);
  }
}

// Run-queue delay added, matched by tid; a thread absent before contributes all it has (it was
// born in the interval), a thread gone now contributes nothing (its last interval is lost).
// CPU time added by the threads read this time (carried ones added nothing).
uint64_t run_delta(const ThreadStat* prev, size_t np, const ThreadStat* cur, size_t nc) {
  uint64_t r = 0;
  size_t i = 0;
  for (size_t j = 0; j < nc; ++j) {
    while (i < np && prev[i].tid < cur[j].tid) ++i;
    if (cur[j].carried) continue;
    const bool seen = i < np && prev[i].tid == cur[j].tid;
    r += seen ? sub(cur[j].run_ns, prev[i].run_ns) : cur[j].run_ns;
  }
  return r;
}

uint64_t wait_delta(const ThreadStat* prev, size_t np, const ThreadStat* cur, size_t nc) {
  uint64_t w = 0;
  size_t i = 0;
  for (size_t j = 0; j < nc; ++j) {
    while (i < np && prev[i].tid < cur[j].tid) ++i;
    bool seen = i < np && prev[i].tid == cur[j].tid;
    w += seen ? sub(cur[j].wait_ns, prev[i].wait_ns) : cur[j].wait_ns;
  }
  return w;
}

// The process's involuntary switches (exited threads included), less the sampler's own; and the
// sampler's own switches of both kinds (the inherited counters count them: taken out of those).
uint64_t invol_switches(uint64_t* own_all) {
  rusage all{}, self{};
  getrusage(RUSAGE_SELF, &all);
  getrusage(RUSAGE_THREAD, &self);
  *own_all = static_cast<uint64_t>(self.ru_nvcsw) + static_cast<uint64_t>(self.ru_nivcsw);
  return sub(static_cast<uint64_t>(all.ru_nivcsw), static_cast<uint64_t>(self.ru_nivcsw));
}

PapiValues diff(const PapiValues& a, const PapiValues& b) {
  PapiValues d = b;
  d.context_switches = sub(b.context_switches, a.context_switches);
  d.cpu_migrations = sub(b.cpu_migrations, a.cpu_migrations);
  d.task_clock_ns = sub(b.task_clock_ns, a.task_clock_ns);
  d.cycles = sub(b.cycles, a.cycles);
  d.instructions = sub(b.instructions, a.instructions);
  d.stall_cycles = sub(b.stall_cycles, a.stall_cycles);
  d.cache_misses = sub(b.cache_misses, a.cache_misses);
  return d;
}

}  // namespace

Sampler::~Sampler() {
  if (running_ && !forked_) stop();
  delete[] bufs_[0];
  delete[] bufs_[1];
}

Status Sampler::start(const SamplerOptions& opt, ThreadCreateFn create, SampleFn fn, void* user) {
  if (running_) return Status::kBusy;
  if (!fn || opt.max_threads == 0) return Status::kError;
  opt_ = opt;
  if (opt_.period_ms < 5) opt_.period_ms = 5;
  if (opt_.period_ms > 60000) opt_.period_ms = 60000;
  fn_ = fn;
  user_ = user;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&wake_, &ca);
  pthread_condattr_destroy(&ca);
  stop_requested_ = false;
  ready_.store(false);
  papi_used_.store(false);
  samples_.store(0);
  tid_.store(0);

  // The counters are opened here, on the caller's thread, before the sampler thread exists: PAPI
  // only initialises while this is the process's only thread, and the sampler is not counted
  // from birth (its own task clock and switches are taken out of each sample anyway).
  papi_open_ns_ = 0;
  if (!opt_.use_papi) {
    snprintf(papi_reason_, sizeof papi_reason_, "%s", "disabled by option");
  } else if (forked_) {
    snprintf(papi_reason_, sizeof papi_reason_, "%s", "forked child: counters are not re-opened");
  } else {
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    papi_used_.store(papi_.open(opt_.papi_library, opt_.papi_verdict) == Status::kOk);
    papi_open_ns_ = sub(now_ns(CLOCK_MONOTONIC), t0);
    snprintf(papi_reason_, sizeof papi_reason_, "%s", papi_.reason());
  }

  // The thread inherits our signal mask: create it with everything blocked, so the host's
  // handlers (SIGINT in Python, SIGPROF profilers, ...) never run on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int r = (create ? create : pthread_create)(&thread_, nullptr, &Sampler::thread_main, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (r != 0) {
    pthread_cond_destroy(&wake_);
    papi_.close();
    papi_used_.store(false);
    return Status::kError;
  }
  running_ = true;
  return Status::kOk;
}

Status Sampler::stop() {
  if (!running_) return Status::kUnsupported;
  if (pthread_equal(pthread_self(), thread_)) return Status::kError;  // from the callback
  pthread_mutex_lock(&lock_);
  stop_requested_ = true;
  pthread_cond_signal(&wake_);
  pthread_mutex_unlock(&lock_);
  pthread_join(thread_, nullptr);
  // Read after the join: a thread stopped before it ran a line still runs run(),
  // which stores its tid first; read before, it could be 0 and the wait skipped.
  thread_gone_wait(tid_.load());
  pthread_cond_destroy(&wake_);
  running_ = false;
  tid_.store(0);
  return Status::kOk;
}

void Sampler::reset_after_fork() {
  // Only the forking thread exists in the child; the sampler's memory is ours to reuse. Its
  // PAPI event set belongs to the parent's thread: forget it without calling PAPI.
  // The lock may have been held by the sampler at fork time: make fresh ones, never unlock.
  forked_ = true;
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  lock_ = fresh;
  running_ = false;
  papi_.forget();
  papi_used_.store(false);
  tid_.store(0);
}

Status Sampler::info(SamplerInfo* out) const {
  if (!out) return Status::kError;
  SamplerInfo i;
  i.running = running_;
  i.samples = samples_.load();
  i.period_ms = opt_.period_ms;
  i.sampler_tid = tid_.load();
  i.thread_reads = thread_reads_.load(std::memory_order_relaxed);
  bool ready = ready_.load(std::memory_order_acquire);
  i.papi_used = papi_used_.load();  // decided in start(), before the thread exists
  i.backend = i.papi_used ? "papi+proc" : "proc";
  i.papi_reason = papi_reason_;
  i.papi_verdict = papi_.verdict_from();
  i.counters = i.papi_used ? papi_.names() : "";
  i.papi_open_ns = papi_open_ns_;
  *out = i;
  return running_ && !ready ? Status::kPending : Status::kOk;
}

void* Sampler::thread_main(void* self) {
  static_cast<Sampler*>(self)->run();
  return nullptr;
}

void Sampler::run() {
  prctl(PR_SET_NAME, "parwidth-mon", 0, 0, 0);
  pid_t me = static_cast<pid_t>(syscall(SYS_gettid));
  tid_.store(me);
  // The per-thread tables (max_threads entries each, a few hundred KiB whose
  // pages fault in as they are initialised) are made here, on the sampler's
  // own thread, so that the host's thread that started it does not wait for them.
  for (ThreadStat*& b : bufs_) {
    delete[] b;
    b = new (std::nothrow) ThreadStat[opt_.max_threads];
  }
  ready_.store(true, std::memory_order_release);
  if (!bufs_[0] || !bufs_[1]) {
    papi_.close();
    return;  // out of memory: no samples, so the monitor decides nothing
  }

  ProcReadOptions ropt;
  ropt.detail = opt_.detail_every > 0;
  ropt.skip_tid = me;
  size_t np = 0, nc = 0, total = 0;
  if (proc_read_threads(ropt, bufs_[0], opt_.max_threads, &np, &total) != Status::kOk) np = 0;
  sort_by_tid(bufs_[0], np);
  PapiValues pprev, pcur;
  bool papi_ok = papi_used_.load() && papi_.read(&pprev) == Status::kOk;
  if (papi_used_.load() && !papi_ok)
    snprintf(papi_reason_, sizeof papi_reason_, "%s", papi_.reason());
  uint64_t t_prev = now_ns(CLOCK_MONOTONIC);
  uint64_t cpu_prev = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t self_prev = now_ns(CLOCK_THREAD_CPUTIME_ID);
  uint64_t own_sw_prev = 0, own_sw = 0;
  uint64_t invol_prev = invol_switches(&own_sw_prev);
  const uint64_t period = static_cast<uint64_t>(opt_.period_ms) * 1000000ull;
  bool read_all = false;
  uint64_t deadline = t_prev + period;

  for (;;) {
    // Absolute deadlines: the period does not drift by the time each sample takes.
    pthread_mutex_lock(&lock_);
    for (;;) {
      if (stop_requested_) break;
      uint64_t t = now_ns(CLOCK_MONOTONIC);
      if (t >= deadline) break;
      timespec ts{static_cast<time_t>(deadline / 1000000000ull),
                  static_cast<long>(deadline % 1000000000ull)};
      pthread_cond_timedwait(&wake_, &lock_, &ts);
    }
    bool stop = stop_requested_;
    pthread_mutex_unlock(&lock_);
    if (stop) break;
    uint64_t t = now_ns(CLOCK_MONOTONIC);
    // Listing the threads, the inherited counters and the process's CPU time
    // all cost the kernel time per thread, idle or not: a process with many
    // threads is sampled less often, so the monitor's cost stays bounded.
    const uint64_t step = period * sample_stretch(total);
    deadline = t >= deadline + step ? t + step : deadline + step;  // resync after a stall

    Sample s;
    s.seq = samples_.load() + 1;
    s.detail = opt_.detail_every > 0 && s.seq % opt_.detail_every == 0;
    ropt.detail = s.detail;
    ThreadStat* cur = bufs_[1];
    ropt.prev = bufs_[0];
    ropt.n_prev = np;
    ropt.round = s.seq;
    // A stray is found where a thread runs: idle ones are not read for it.
    ropt.read_all = read_all;
    size_t reads = 0;
    if (proc_read_threads(ropt, cur, opt_.max_threads, &nc, &total, &reads) != Status::kOk)
      nc = total = 0;
    s.thread_reads = reads;
    thread_reads_.fetch_add(reads, std::memory_order_relaxed);
    sort_by_tid(cur, nc);
    s.t_ns = now_ns(CLOCK_MONOTONIC);
    uint64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t self_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t invol = invol_switches(&own_sw);
    s.dt_ns = sub(s.t_ns, t_prev);
    s.sampler_cpu_ns = sub(self_cpu, self_prev);
    if (papi_ok && papi_.read(&pcur) == Status::kOk) {
      s.papi = diff(pprev, pcur);
      s.papi.task_clock_ns = sub(s.papi.task_clock_ns, s.sampler_cpu_ns);
      s.papi.context_switches = sub(s.papi.context_switches, sub(own_sw, own_sw_prev));
      pprev = pcur;
    } else if (papi_ok) {
      papi_ok = false;  // the host closed or reused the descriptors: /proc from now on
      snprintf(papi_reason_, sizeof papi_reason_, "%s", papi_.reason());
    }
    s.runq_wait_ns = wait_delta(bufs_[0], np, cur, nc);
    s.invol_switches = sub(invol, invol_prev);
    s.cpu_time_ns = sub(sub(cpu, cpu_prev), s.sampler_cpu_ns);
    // CPU time that the threads read do not account for was spent by a
    // skipped thread (or one that exited): read every thread next time.
    const uint64_t slack = std::max<uint64_t>(2000000ull, s.dt_ns / 20);
    read_all = s.cpu_time_ns > run_delta(bufs_[0], np, cur, nc) + slack;
    s.threads = static_cast<uint32_t>(total);
    s.threads_truncated = total > nc;
    s.thread = cur;
    s.n_thread = nc;
    fn_(s, user_);
    samples_.store(s.seq);
    std::swap(bufs_[0], bufs_[1]);
    np = nc;
    t_prev = s.t_ns;
    cpu_prev = cpu;
    self_prev = self_cpu;
    invol_prev = invol;
    own_sw_prev = own_sw;
  }
  papi_.close();
}

}  // namespace pw::counters
