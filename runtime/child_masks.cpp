// runtime/child_masks: the process inside its share, and the mask and environment a
// child (fork, exec, posix_spawn) starts with.
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/launchers.h"
#include "governor/process_share.h"
#include "runtime/state.h"
#include "topology/affinity.h"

namespace pw::rt {

namespace {

// Moves the threads that follow `from` to `to`, but not those in `skip`
// (sorted); returns how many moved.
int process_move(const std::vector<int>& from, const std::vector<int>& to,
                 const std::vector<long>& skip) {
  DIR* d = opendir("/proc/self/task");
  if (!d) {
    // No /proc: at least the calling thread (at activation, the one that
    // creates the others, so they inherit it).
    std::vector<int> now;
    return topo::affinity_get(0, &now) == 0 && gov::thread_follows(now, from) &&
                   topo::affinity_set(0, to) == 0
               ? 1
               : 0;
  }
  int moved = 0;
  std::vector<int> now;
  while (struct dirent* e = readdir(d)) {
    char* end = nullptr;
    const long tid = strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || tid <= 0) continue;
    if (std::binary_search(skip.begin(), skip.end(), tid)) continue;
    if (topo::affinity_get(static_cast<pid_t>(tid), &now) == 0 && gov::thread_follows(now, from) &&
        topo::affinity_set(static_cast<pid_t>(tid), to) == 0)
      ++moved;
  }
  closedir(d);
  return moved;
}

// Publishes the process's mask for the exec hooks.
void exec_state_update(const Runtime& r) {
  if (!r.process_mask.empty()) {
    g_exec.affinity.store(r.process_cpus);
    g_exec.share.store(r.process_mask);
    g_exec.confined.store(true, std::memory_order_release);
  } else {
    g_exec.confined.store(false, std::memory_order_release);
    if (!g_exec.inside.load(std::memory_order_relaxed)) g_exec.share.clear();
  }
}

}  // namespace

// Puts the whole process inside `mask` (empty: back to its affinity at
// activation): every thread whose mask is not narrower than the process's
// current one, the main thread and the monitor included. The threads parwidth
// pinned are left to the plan (repin_threads): on a share of one core their
// mask is the process's, and they must not be widened with it. Returns the
// threads moved.
//
// The exec hooks read the published state on whichever thread execs: it is
// published before any thread is narrowed and, growing back, after every
// thread is widened, so that a thread that sees its narrowed mask also sees
// that the process is confined (else a new image would plan from its share).
int process_confine(Runtime& r, const std::vector<int>& mask) {
  const std::vector<int> from = r.process_mask.empty() ? r.process_cpus : r.process_mask;
  const std::vector<int>& to = mask.empty() ? r.process_cpus : mask;
  if (to.empty() || to == from) return 0;
  r.process_mask = mask;
  if (!mask.empty()) exec_state_update(r);
  std::vector<long> pinned;
  for (const gov::ThreadRecord& t : r.threads.live())
    if (t.pinned) pinned.push_back(t.tid);
  std::sort(pinned.begin(), pinned.end());
  const int moved = process_move(from, to, pinned);
  if (mask.empty()) exec_state_update(r);
  return moved;
}

// Whether the process is confined, in the report's words.
void process_note(Runtime& r, int moved) {
  if (r.process_mask.empty()) {
    framework_note("process", "affinity", topo::cpulist_format(r.process_cpus), moved > 0,
                   moved > 0 ? "the share is the whole affinity again; " + std::to_string(moved) +
                                   " threads widened back"
                             : "the share is the whole affinity: not narrowed");
    return;
  }
  const std::shared_ptr<const InForce> now = r.owner.current();
  framework_note("process", "affinity", topo::cpulist_format(r.process_mask), true,
                 "the share (" + topo::cpulist_format(now ? now->budget.cpus : r.process_mask) +
                     ") is smaller than the affinity (" + topo::cpulist_format(r.process_cpus) +
                     "): " + std::to_string(moved) +
                     " unpinned threads (the main thread among them) confined to it, as "
                     "numactl or Slurm's binding would; children inherit it");
}

// Whether the process's unpinned threads are confined in this configuration.
bool process_confines(const Runtime& r) {
  return r.opt.mode == opt::Mode::kGovern && r.opt.topology.empty() &&
         r.opt.pin != gov::PinMode::kNone && !r.process_cpus.empty();
}

// Whether an environment (NAME=value strings, null-terminated) is a rank's that
// a launcher describes: a local rank and size from PARWIDTH_LOCAL_* or a
// launcher's variables (planning::local_share's reading).
bool env_names_a_rank(char* const envp[]) {
  const opt::EnvLookup lookup = [envp](const char* name) -> const char* {
    const size_t n = strlen(name);
    for (char* const* e = envp; *e; ++e)
      if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return nullptr;
  };
  opt::Options none;
  int rank = 0, size = 1;
  std::string from;
  planning::local_share(none, lookup, &rank, &size, &from);
  return from != "none";
}

const std::vector<int>& process_cpus() {
  return g->process_cpus;
}

std::vector<int> spawn_cpus(char* const envp[]) {
  if (!g || g->state.load(std::memory_order_acquire) != kActive) return {};
  Runtime& r = *g;
  // A launcher spawning its ranks: they divide the node themselves.
  const bool rank = envp && r.local_from == "none" && env_names_a_rank(envp);
  if (rank) r.launcher.store(true, std::memory_order_relaxed);
  // The exec decision (gov::exec_share) for a child: the spawning thread may
  // be a pinned pool thread, so "as is" means the process's affinity here.
  const bool confined = !r.process_mask.empty();
  const gov::ExecShare d =
      gov::exec_share(confined, g_exec.inside.load(std::memory_order_relaxed), false, rank, false);
  return d.mask == gov::ExecShare::Mask::kShare && confined ? r.process_mask : r.process_cpus;
}

namespace {

// "a-b,c" into buf (no allocation); false when it does not fit.
bool cpus_format(const cpu_set_t& set, char* buf, size_t len) {
  size_t at = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int hi = c;
    while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, &set)) ++hi;
    const int n = hi > c ? snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", c, hi)
                         : snprintf(buf + at, len - at, "%s%d", at ? "," : "", c);
    if (n < 0 || static_cast<size_t>(n) >= len - at) return false;
    at += static_cast<size_t>(n);
    c = hi;
  }
  return at > 0;
}

// The value of `name` in envp, or nullptr.
const char* env_in(char* const envp[], const char* name) {
  const size_t n = strlen(name);
  for (char* const* e = envp; e && *e; ++e)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}

}  // namespace

bool exec_prepare(char* const envp[], ExecPrep* out) noexcept {
  out->set_mask = false;
  out->entry[0] = '\0';
  if (!g || g->state.load(std::memory_order_acquire) == kUnselected) return false;
  const bool confined = g_exec.confined.load(std::memory_order_acquire);
  const bool inside = g_exec.inside.load(std::memory_order_acquire);
  if (!confined && !inside) return false;
  // A launcher's rank: its environment names a local rank that ours does not.
  bool rank = false;
  for (const launchers::Launcher& l : launchers::kLaunchers) {
    const char* theirs = env_in(envp, l.rank);
    const char* mine = getenv(l.rank);
    if (theirs && (!mine || strcmp(mine, theirs) != 0)) rank = true;
  }
  const char* preload = env_in(envp, "LD_PRELOAD");
  const bool governed = preload && strstr(preload, "parwidth");
  const bool same = g->pid.load(std::memory_order_relaxed) == getpid();
  const gov::ExecShare d = gov::exec_share(confined, inside, same, rank, governed);
  if (d.mask == gov::ExecShare::Mask::kShare) out->set_mask = g_exec.share.load(&out->mask);
  if (d.mask == gov::ExecShare::Mask::kAffinity) out->set_mask = g_exec.affinity.load(&out->mask);
  if (d.mark) {
    cpu_set_t share;
    const size_t n = sizeof kInsideShareVar - 1;
    memcpy(out->entry, kInsideShareVar, n);
    out->entry[n] = '=';
    if (!g_exec.share.load(&share) ||
        !cpus_format(share, out->entry + n + 1, sizeof out->entry - n - 1))
      out->entry[0] = '\0';
    // Already said (the environment came down from the process that confined us).
    const char* have = env_in(envp, kInsideShareVar);
    if (out->entry[0] && have && strcmp(have, out->entry + n + 1) == 0) out->entry[0] = '\0';
  }
  return out->set_mask || out->entry[0];
}

}  // namespace pw::rt
