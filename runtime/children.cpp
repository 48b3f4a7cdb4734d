// runtime/children: the process's child processes as the monitor sees them, and
// the pin mode they put in force (gov::pin_in_force): while a child runs on the
// process's cores, pool threads pinned one per core are pinned to their pool's
// cores instead.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/cache.h"
#include "runtime/fail_open.h"
#include "runtime/state.h"

namespace pw::rt {

namespace {

// How long no child has run before one-core pinning comes back.
constexpr int kHoldMs = 1000;
// Every this many samples all threads' children are read (children made with
// vfork or clone, or by a thread the hooks did not see fork); the main thread's
// and the known forkers' are read every sample.
constexpr unsigned kFullScanEvery = 10;
constexpr int kFullScanTasks = 256;

}  // namespace

void task_children(const std::string& tid, std::vector<long>* pids) {
  std::string list, unused;
  if (!cache::file_read_capped("/proc/self/task/" + tid + "/children", 65536, &list, &unused))
    return;
  const char* p = list.c_str();
  while (*p) {
    char* end = nullptr;
    const long pid = strtol(p, &end, 10);
    if (end == p) break;
    if (pid > 0) pids->push_back(pid);
    p = end;
  }
}

namespace {

// A child's CPU time in clock ticks, if it is still our child and not a zombie.
bool child_ticks(long pid, pid_t self, unsigned long long* ticks) {
  std::string stat, unused;
  if (!cache::file_read_capped("/proc/" + std::to_string(pid) + "/stat", 4096, &stat, &unused))
    return false;
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char* p = stat.c_str() + close + 2;
  const char state = *p;
  if (state == 'Z' || state == 'X') return false;
  char* end = nullptr;
  unsigned long long field[12] = {};
  ++p;
  for (int i = 0; i < 12; ++i) {
    field[i] = strtoull(p, &end, 10);
    if (end == p) return false;
    p = end;
  }
  if (static_cast<pid_t>(field[0]) != self) return false;  // reparented: not ours now
  *ticks = field[10] + field[11];
  return true;
}

}  // namespace

void child_started() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return;
  const long tid = static_cast<long>(gettid());
  for (std::atomic<long>& f : r->forkers) {
    long v = f.load(std::memory_order_relaxed);
    if (v == tid) return;
    if (v == 0 && f.compare_exchange_strong(v, tid, std::memory_order_relaxed)) return;
  }
  // Full: the periodic scan of every thread finds its children.
}

// On the monitor thread, every sample: whether a child ran since the last one.
void children_tick() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive ||
      r->opt.mode != opt::Mode::kGovern || r->opt.pin != gov::PinMode::kCore || r->forked_child)
    return;
  fail_open("children-tick", [r] {
    const pid_t self = getpid();
    std::vector<long> pids;
    task_children(std::to_string(self), &pids);
    for (std::atomic<long>& f : r->forkers) {
      const long tid = f.load(std::memory_order_relaxed);
      if (tid > 0 && tid != self) task_children(std::to_string(tid), &pids);
    }
    if (r->children_samples++ % kFullScanEvery == 0) {
      if (DIR* d = opendir("/proc/self/task")) {
        int looked = 0;
        while (struct dirent* e = readdir(d)) {
          if (e->d_name[0] == '.') continue;
          if (++looked > kFullScanTasks) break;
          task_children(e->d_name, &pids);
        }
        closedir(d);
      }
    }
    // Those seen before stay looked at, whichever way they were found.
    for (const auto& [pid, ticks] : r->children_ticks) pids.push_back(pid);
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    bool ran = false;
    std::vector<std::pair<long, unsigned long long>> now;
    for (long pid : pids) {
      unsigned long long ticks = 0;
      if (!child_ticks(pid, self, &ticks)) continue;
      const auto before = std::find_if(r->children_ticks.begin(), r->children_ticks.end(),
                                       [pid](const auto& c) { return c.first == pid; });
      // A new child runs from its start (a fork's child, an exec'd program);
      // a known one ran if its CPU time grew by a clock tick or more.
      if (before == r->children_ticks.end() || ticks > before->second) ran = true;
      now.emplace_back(pid, ticks);
    }
    r->children_ticks.swap(now);
    const int hold = std::max(1, kHoldMs / std::max(1, r->opt.monitor_ms));
    if (!gov::children_step(&r->children_hold, ran, hold)) return;
    Change c;
    c.kind = Change::Kind::kChildren;
    c.children = r->children_hold.on;
    c.cause = c.children ? "children: " + std::to_string(r->children_ticks.size()) +
                               " child process(es) running on the process's cores"
                         : "children: none has run for " + std::to_string(kHoldMs / 1000) + " s";
    plan_change(*r, c);
  });
}

void process_tick(uint64_t t_ns, double busy_cpus) {
  children_tick();
  node_tick(t_ns, busy_cpus);
}

}  // namespace pw::rt
