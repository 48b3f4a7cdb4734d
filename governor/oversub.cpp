// governor/oversub.cpp: the oversubscription detector's hysteresis and its reactions.
#include "governor/oversub.h"

#include <cmath>
#include <cstdio>

namespace pw::gov {
namespace {
// Fewer CPUs than this are as likely the two clocks' disagreement (task clock, schedstat).
constexpr double kNoiseCpus = 0.05;
// The bound on the threads' wait per unit of run time used to estimate child processes' wait
// (8: nine busy tasks per CPU).
constexpr double kMaxWaitPerRun = 8;

// "thread 14 (a request thread ...) 1.0 CPUs, thread 12 (the main thread, an event loop)
// 0.1 CPUs": the program's busiest own thread and its event loop, for the advice.
void own_threads_text(const OversubSample& s, char* out, size_t room) {
  out[0] = '\0';
  size_t used = 0;
  for (const OwnThread& t : s.own_top) {
    if (t.tid == 0 || (t.cpus < kNoiseCpus && !t.event_loop) || used + 1 >= room) continue;
    const char* what = t.event_loop && t.main ? "the main thread, an event loop"
                       : t.event_loop         ? "an event loop"
                       : t.main               ? "the main thread"
                                              : "a request thread or a model's caller";
    const int n = snprintf(out + used, room - used, "%sthread %ld (%s) %.1f CPUs", used ? ", " : "",
                           t.tid, what, t.cpus);
    if (n < 0) break;
    used += static_cast<size_t>(n) < room - used ? static_cast<size_t>(n) : room - used - 1;
  }
}
}  // namespace

const char* action_kind_name(ActionKind k) {
  switch (k) {
    case ActionKind::kOversubscribed:
      return "oversubscribed";
    case ActionKind::kRecovered:
      return "recovered";
    case ActionKind::kLowerOmpCap:
      return "lower_omp_cap";
    case ActionKind::kRaiseOmpCap:
      return "raise_omp_cap";
    case ActionKind::kAffinityKept:
      return "affinity_kept";
    case ActionKind::kAdvice:
      return "advice";
    case ActionKind::kContention:
      return "contention";
    case ActionKind::kContentionEnded:
      return "contention_ended";
  }
  return "?";
}

OversubDetector::OversubDetector(const OversubConfig& cfg) : cfg_(cfg) {
  // Bad configuration degrades to something sane rather than failing: this runs in the host.
  if (!(cfg_.budget_cpus > 0)) cfg_.budget_cpus = 1;
  if (cfg_.omp_cap < 0) cfg_.omp_cap = 0;
  if (cfg_.enter_samples < 1) cfg_.enter_samples = 1;
  if (cfg_.leave_samples < 1) cfg_.leave_samples = 1;
  if (cfg_.relower_samples < 1) cfg_.relower_samples = 1;
  if (cfg_.restore_samples < 1) cfg_.restore_samples = 1;
  if (cfg_.leave_wait_ratio > cfg_.enter_wait_ratio) cfg_.leave_wait_ratio = cfg_.enter_wait_ratio;
  cap_ = cfg_.omp_cap;
}

void OversubDetector::rebudget(double budget_cpus, int omp_cap) {
  cfg_.budget_cpus = budget_cpus > 0 ? budget_cpus : 1;
  cfg_.omp_cap = omp_cap < 0 ? 0 : omp_cap;
  cap_ = cfg_.omp_cap;
  hot_run_ = calm_run_ = since_lower_ = 0;
}

// Scale the cap by budget / demand: if the process wants 1.5x its CPUs, its teams get 2/3 of the
// threads. Always at least one step down while above 1, so a persistent overload converges.
// `a` already holds the sample's numbers (base()).
void OversubDetector::lower(const OversubSample& s, double own, double invol, OversubAction* a) {
  (void)s;
  double demand = cfg_.budget_cpus * (1 + own);
  int next = static_cast<int>(std::floor(cap_ * cfg_.budget_cpus / demand));
  if (next >= cap_) next = cap_ - 1;
  if (next < 1) next = 1;
  a->kind = ActionKind::kLowerOmpCap;
  a->old_cap = cap_;
  a->new_cap = next;
  snprintf(a->text, sizeof a->text,
           "OpenMP team cap %d -> %d for later regions: %.2f of this process's threads waiting "
           "per CPU (%.0f preemptions/s per CPU), demand %.1f CPUs for a budget of %.1f",
           cap_, next, own, invol, a->demand_cpus, cfg_.budget_cpus);
  cap_ = next;
  since_lower_ = 0;
}

size_t OversubDetector::step(const OversubSample& s, OversubAction* out, size_t cap) {
  if (s.dt_ns == 0) return 0;
  ++samples_;
  const double dt = static_cast<double>(s.dt_ns);
  const double budget = cfg_.budget_cpus;
  const double waiting = static_cast<double>(s.runq_wait_ns) / dt;
  // The counters' task clock counts the threads and the child processes (inherited
  // counters); beyond the threads' own run time it is the children's CPU time on our CPUs.
  const double children = s.have_counters && s.task_clock_ns > s.run_ns
                              ? static_cast<double>(s.task_clock_ns - s.run_ns) / dt
                              : 0.0;
  // The children's own run-queue wait is not in /proc's numbers for this process. The fair
  // scheduler gives every busy runnable task the same share, so they wait, per unit of CPU
  // time, about as long as the threads do: estimate their wait with the threads' ratio
  // (bounded, and only where the threads ran enough for the ratio to mean something).
  const double threads_running = static_cast<double>(s.run_ns) / dt;
  double per_run = threads_running >= kNoiseCpus ? waiting / threads_running : 0.0;
  if (per_run > kMaxWaitPerRun) per_run = kMaxWaitPerRun;
  const double children_waiting = children >= kNoiseCpus ? children * per_run : 0.0;
  const double running = threads_running + children;
  const double demand = running + waiting + children_waiting;
  const double wait = (waiting + children_waiting) / budget;
  const double excess = demand > budget ? (demand - budget) / budget : 0;
  const double own = wait < excess ? wait : excess;
  const double contention = wait - own;
  const double invol = static_cast<double>(s.invol_switches) / (dt / 1e9) / budget;
  if (wait > max_wait_) max_wait_ = wait;
  if (own > max_own_) max_own_ = own;
  if (contention > max_contention_) max_contention_ = contention;

  bool hot = own >= cfg_.enter_wait_ratio ||
             (invol >= cfg_.enter_invol_rate && own >= cfg_.leave_wait_ratio);
  bool calm = own < cfg_.leave_wait_ratio;
  hot_run_ = hot ? hot_run_ + 1 : 0;
  calm_run_ = calm ? calm_run_ + 1 : 0;
  busy_run_ = contention >= cfg_.enter_contention_ratio ? busy_run_ + 1 : 0;
  quiet_run_ = contention < cfg_.leave_contention_ratio ? quiet_run_ + 1 : 0;

  OversubAction buf[kMaxActions];
  size_t n = 0;
  auto base = [&](ActionKind k) -> OversubAction& {
    OversubAction& a = buf[n++];
    a.t_ns = s.t_ns;
    a.kind = k;
    a.wait_ratio = wait;
    a.own_ratio = own;
    a.contention_ratio = contention;
    a.invol_rate = invol;
    a.demand_cpus = demand;
    a.children_cpus = children;
    a.children_waiting_cpus = children_waiting;
    a.old_cap = a.new_cap = cap_;
    a.strays = s.strays;
    a.threads = s.threads;
    a.counters = s;
    return a;
  };

  if (!in_ && hot_run_ >= cfg_.enter_samples) {
    in_ = ever_ = true;
    advised_ = false;
    ++episodes_;
    OversubAction& a = base(ActionKind::kOversubscribed);
    if (children > kNoiseCpus)
      snprintf(a.text, sizeof a.text,
               "oversubscribed for %d samples: %.1f runnable threads on %.1f CPUs (child "
               "processes: %.1f CPUs by the counters, %.1f waiting by estimate), %.2f waiting "
               "per CPU",
               hot_run_, demand, budget, children, children_waiting, own);
    else if (s.have_roles)
      snprintf(a.text, sizeof a.text,
               "oversubscribed for %d samples: %.1f runnable threads on %.1f CPUs (pools' "
               "threads %.1f, the program's own threads %.1f), %.2f of them waiting per CPU, "
               "%.0f preemptions/s per CPU",
               hot_run_, demand, budget, s.pool_cpus, s.own_cpus, own, invol);
    else
      snprintf(a.text, sizeof a.text,
               "oversubscribed for %d samples: %.1f runnable threads on %.1f CPUs, %.2f of them "
               "waiting per CPU, %.0f preemptions/s per CPU",
               hot_run_, demand, budget, own, invol);
    if (cap_ > 1) lower(s, own, invol, &base(ActionKind::kLowerOmpCap));
  } else if (in_ && hot && ++since_lower_ >= cfg_.relower_samples && cap_ > 1) {
    lower(s, own, invol, &base(ActionKind::kLowerOmpCap));
  } else if (in_ && calm_run_ >= cfg_.leave_samples) {
    in_ = false;
    OversubAction& a = base(ActionKind::kRecovered);
    snprintf(a.text, sizeof a.text,
             "recovered after %d calm samples: %.2f of this process's threads waiting per CPU",
             calm_run_, own);
    calm_run_ = 0;  // the restore count starts now
  } else if (!in_ && cap_ < cfg_.omp_cap && calm_run_ >= cfg_.restore_samples) {
    OversubAction& a = base(ActionKind::kRaiseOmpCap);
    a.new_cap = cap_ * 2 < cfg_.omp_cap ? cap_ * 2 : cfg_.omp_cap;
    snprintf(a.text, sizeof a.text,
             "OpenMP team cap %d -> %d for later regions: calm for %d samples (%.2f waiting per "
             "CPU)",
             cap_, a.new_cap, calm_run_, own);
    cap_ = a.new_cap;
    calm_run_ = 0;
  }

  // Nothing left to shrink (no OpenMP cap, or at 1) or pools we cannot resize: say what would.
  if (in_ && !advised_ && (cap_ <= 1 || cfg_.fixed_pools)) {
    advised_ = true;
    OversubAction& a = base(ActionKind::kAdvice);
    const char* why = cfg_.fixed_pools    ? "framework thread pools cannot be resized at run time"
                      : cfg_.omp_cap == 0 ? "OpenMP teams are not capped in this process"
                                          : "the OpenMP team cap is already 1";
    char own_text[200];
    own_threads_text(s, own_text, sizeof own_text);
    // The pools' threads alone fit the budget: the waiting is the program's own threads
    // (a server's event loop beside the thread that runs the model), which no pool size
    // changes; what would is for whoever runs the program.
    const bool own_threads =
        s.have_roles && s.own_cpus >= kNoiseCpus && s.pool_cpus <= budget && own_text[0];
    if (children <= kNoiseCpus && own_threads)
      snprintf(a.text, sizeof a.text,
               "still %.2f waiting per CPU from the program's own threads, not pools: %.1f CPUs "
               "(%s) beside %.1f of pool threads on %.1f CPUs (%s). Fewer pool threads would "
               "not help; an operator can give the process more CPUs, or let fewer requests "
               "run at once (fewer request threads), with model calls off the event loop",
               own, s.own_cpus, own_text, s.pool_cpus, budget, why);
    else if (children > kNoiseCpus)
      snprintf(a.text, sizeof a.text,
               "still %.2f waiting per CPU, %s; child processes use %.1f CPUs: start fewer "
               "of them or of threads",
               own, why, children);
    else if (s.have_roles)
      snprintf(a.text, sizeof a.text,
               "still %.2f threads waiting per CPU and %s: its pools' threads want %.1f CPUs of "
               "its %.1f: restart with fewer pool threads (PARWIDTH_POOLS / PARWIDTH_INTRA) or "
               "give the process more CPUs%s%s",
               own, why, s.pool_cpus, budget, own_text[0] ? "; the program's own threads: " : "",
               own_text);
    else
      snprintf(a.text, sizeof a.text,
               "still %.2f threads waiting per CPU and %s: restart with fewer threads "
               "(PARWIDTH_POOLS / PARWIDTH_INTRA) or give the process more CPUs",
               own, why);
  }

  // Other processes' load: recorded once per episode; teams keep their size (shrinking them would
  // slow this process down and not make the other load go away).
  if (!contended_ && busy_run_ >= cfg_.enter_samples) {
    contended_ = contended_ever_ = true;
    OversubAction& a = base(ActionKind::kContention);
    snprintf(a.text, sizeof a.text,
             "contention: %.2f threads waiting per CPU while this process has %.1f runnable "
             "threads on %.1f CPUs: other processes' load; teams left as they are",
             contention, demand, budget);
  } else if (contended_ && quiet_run_ >= cfg_.leave_samples) {
    contended_ = false;
    OversubAction& a = base(ActionKind::kContentionEnded);
    snprintf(a.text, sizeof a.text, "contention ended after %d quiet samples", quiet_run_);
  }

  if (s.strays == 0) strays_reported_ = 0;
  if (s.strays > strays_reported_) {
    strays_reported_ = s.strays;
    OversubAction& a = base(ActionKind::kAffinityKept);
    snprintf(a.text, sizeof a.text,
             "%u governed threads run outside their pool's cores where the program (or a library "
             "it uses) set their affinity: left where it put them",
             s.strays);
  }

  actions_ += n;
  size_t w = n < cap ? n : cap;
  for (size_t i = 0; i < w; ++i) out[i] = buf[i];
  return out ? w : 0;
}

OversubSummary OversubDetector::summary() const {
  OversubSummary r;
  r.samples = samples_;
  r.oversubscribed = ever_;
  r.oversubscribed_now = in_;
  r.max_wait_ratio = max_wait_;
  r.max_own_ratio = max_own_;
  r.max_contention_ratio = max_contention_;
  r.contention = contended_ever_;
  r.episodes = episodes_;
  r.omp_cap = cap_;
  r.actions = actions_;
  return r;
}

bool thread_is_stray(const cpu_set_t& allowed, int cpu, const cpu_set_t& assigned) {
  if (cpu >= 0 && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &assigned)) return true;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed) && !CPU_ISSET(c, &assigned)) return true;
  }
  return false;
}

}  // namespace pw::gov
