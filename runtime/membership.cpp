// runtime/membership: this process in the node registry — joining and leaving by
// demand, and putting the node's share in force.
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/cache.h"
#include "core/log.h"
#include "governor/node_share.h"
#include "governor/process_share.h"
#include "runtime/fail_open.h"
#include "runtime/monitor.h"
#include "runtime/state.h"

namespace pw::rt {

namespace {

std::vector<gov::NodeCore> node_cores_of(const topo::Budget& b) {
  std::vector<gov::NodeCore> v;
  for (const topo::Socket& s : b.sockets)
    for (const topo::Core& c : s.cores)
      if (!c.pus.empty()) v.push_back({s.os_index, c.pus[0]});
  return v;
}

// The budget cut down to the cores (first PUs) in `keep`.
topo::Budget budget_narrow(const topo::Budget& full, std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  topo::Budget b;
  b.quota_cpus = full.quota_cpus;
  b.notes = full.notes;
  for (const topo::Socket& s : full.sockets) {
    topo::Socket out;
    out.os_index = s.os_index;
    for (const topo::Core& c : s.cores) {
      if (c.pus.empty() || !std::binary_search(keep.begin(), keep.end(), c.pus[0])) continue;
      topo::Core core = c;
      core.socket = static_cast<int>(b.sockets.size());
      b.cpus.insert(b.cpus.end(), c.pus.begin(), c.pus.end());
      out.cores.push_back(std::move(core));
    }
    if (!out.cores.empty()) b.sockets.push_back(std::move(out));
  }
  std::sort(b.cpus.begin(), b.cpus.end());
  for (const topo::Socket& s : b.sockets) b.cores += static_cast<int>(s.cores.size());
  return b;
}

// What a re-division could not undo: pools made once, larger than the plan's
// threads now (re-pinned into the share, they keep their size).
void fixed_pools_check(Runtime& r, const gov::Plan& p) {
  std::vector<Runtime::FixedPool> fixed;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    fixed = r.fixed_pools;
  }
  const int worth = p.pools * p.threads;
  for (const Runtime::FixedPool& f : fixed)
    if (f.threads > worth)
      framework_note(f.framework, "thread pool " + f.pool, std::to_string(f.threads), false,
                     "made with " + std::to_string(f.threads) +
                         " threads, it keeps them on a share planned for " + std::to_string(worth) +
                         ": " + f.framework +
                         " cannot resize a pool once it is made (its threads are re-pinned "
                         "into the share; start this process after its neighbours, or size "
                         "its pools by hand)");
}

// The budget of a node share: the full budget cut down to its cores.
topo::Budget share_budget(const Runtime& r, const gov::NodeShare& share) {
  topo::Budget b = budget_narrow(r.full_budget, share.cpus);
  b.local_rank = share.rank;
  b.local_size = share.size;
  b.notes.push_back(share.note + " (" + r.node.dir() + ")");
  return b;
}

// Puts a node share in force through the owner (plan_change): the plan for new
// threads, the OpenMP cap, existing threads re-pinned, the unpinned ones (the
// main thread) confined, the monitor's budget (runtime/activation.cpp,
// plan_apply). The main thread's mask is what the program sees of its share
// (sched_getaffinity): it changes after the plan, the cap and the pins, so that
// those are in force by the time the program can see it, however long this
// thread is kept off a CPU meanwhile (a loaded node). Before the process is
// active (joining at activation) only the plan changes: no thread exists yet.
void node_apply(Runtime& r, const gov::NodeShare& share, const std::string& when = std::string()) {
  // Shared cores keep the same CPUs as having them alone: the worth tells them apart.
  const int worth = share.cores_worth > 0 ? share.cores_worth : static_cast<int>(share.cpus.size());
  const int team = share.time_shared ? share.team_worth : 0;
  if (share.cpus.empty() ||
      (share.cpus == r.node_cpus && worth == r.node_worth && team == r.node_team))
    return;
  r.node_cpus = share.cpus;
  r.node_worth = worth;
  r.node_team = team;
  Change c;
  c.kind = Change::Kind::kShare;
  c.cause = "node: " + share.note + when;
  c.budget = share_budget(r, share);
  c.shared_worth = share.overlap ? share.cores_worth : 0;
  c.team_worth = team;
  const std::shared_ptr<const InForce> now = plan_change(r, c);
  if (!now || r.state.load(std::memory_order_acquire) != kActive) return;
  const std::string list = topo::cpulist_format(now->budget.cpus);
  log::info(1, "node: %s: now %d cores (%s)", share.note.c_str(), now->budget.cores, list.c_str());
  if (++r.node_changes <= 32) {
    std::string applied;
    for (const TimelineEntry& e : r.owner.timeline())
      if (e.generation == now->generation)
        for (const std::string& a : e.applied) applied += (applied.empty() ? "" : ", ") + a;
    framework_note("node", "cores", list, true,
                   share.note + "; generation " + std::to_string(now->generation) +
                       (applied.empty() ? std::string() : ": " + applied) + when);
    fixed_pools_check(r, now->plan);
  }
}

// Rewrites our entry when what `parwidth node` shows of us changed: the plan
// in force, the monitor's verdict, whether it serves (on the sampler thread,
// or before it runs).
void node_entry_refresh(Runtime& r, uint64_t t_ns) {
  if (!r.node.published()) return;
  gov::NodeMember self = r.node.self();
  const gov::Plan& p = r.threads.plan();
  const int pools = static_cast<int>(p.core_sets.size());
  const int verdict = monitor::oversubscribed_now();
  // Whether it serves is part of the division (servers share their cores by
  // time): written as soon as its event loop is seen.
  const bool serves = monitor::event_loop_seen();
  const bool rest_same = self.pools == pools && self.threads == p.threads && self.serves == serves;
  if (rest_same && self.oversubscribed == verdict) return;
  // A verdict that flips sample by sample on a loaded machine is rewritten
  // at most once a second: each rewrite is a file the others must re-read.
  if (rest_same && r.node_refresh_ns && t_ns - r.node_refresh_ns < 1000000000ull) return;
  r.node_refresh_ns = t_ns;
  self.pools = pools;
  self.threads = p.threads;
  self.oversubscribed = verdict;
  self.serves = serves;
  std::string err;
  r.node.publish(self, &err);  // failing, the entry in place stays right about the cores
}

// With PARWIDTH_NODE_EXPECT, the share the pools that cannot be resized are made for while
// fewer members than expected are on the node (fixed_pools_plan); cleared once they are all
// there or the process is not a member.
void expected_update(Runtime& r, const std::vector<gov::NodeMember>* members, size_t self) {
  gov::NodeShare s;
  if (members && r.opt.node_expect > static_cast<int>(members->size()))
    s = gov::node_share_expected(*members, self, r.opt.node_expect);
  std::lock_guard<std::mutex> lock(r.mu);
  r.expected_share = std::move(s);
}

// Publishes this process in the registry and takes its share.
bool node_publish(Runtime& r) {
  std::string err;
  gov::NodeMember self;
  self.pid = getpid();
  node::proc_start_time(self.pid, &self.start);
  self.cores = node_cores_of(r.full_budget);
  self.joined = static_cast<long long>(time(nullptr));
  self.oversubscribed = monitor::oversubscribed_now();
  self.serves = monitor::event_loop_seen();
  if (!r.node.publish(self, &err)) {
    warn_once("node", "node registry: " + err +
                          "; this process's share of the node is not "
                          "divided with other governed processes");
    return false;
  }
  node::ScanResult s;
  if (r.node.scan(&s)) {
    expected_update(r, &s.members, s.self);
    node_apply(r, gov::node_share(s.members, s.self));
  }
  node_entry_refresh(r, 0);
  return true;
}

}  // namespace

gov::Plan plan_on(const Runtime& r, const topo::Budget& b, int worth,
                  const planning::GraphSummary& graph, std::vector<std::string>* warnings,
                  bool* found) {
  std::vector<int> cores;  // first PUs, socket-major
  for (const topo::Socket& s : b.sockets)
    for (const topo::Core& c : s.cores)
      if (!c.pus.empty()) cores.push_back(c.pus[0]);
  if (worth <= 0 || worth >= static_cast<int>(cores.size()))
    return planning::plan_with_cache(r.opt, env_lookup, r.machine, b, graph, warnings, found);
  // Cores shared by more members than cores: planned on the cores' worth this
  // process keeps busy, its threads spread over all of them.
  const topo::Budget first =
      budget_narrow(b, std::vector<int>(cores.begin(), cores.begin() + worth));
  return gov::plan_shared(
      planning::plan_with_cache(r.opt, env_lookup, r.machine, first, graph, warnings, found),
      cores);
}

// Opens the registry. With the monitor, the process joins when its parallel
// work runs (node_tick); without it, now, for the process's life.
void node_join(Runtime& r) {
  // The default directory may be squatted by another user (a directory or a
  // symlink of theirs): the user's runtime directory next, and only then no
  // registry (one warning).
  std::string errors;
  bool opened = false;
  for (const std::string& dir : node::candidate_dirs(r.opt.node_dir)) {
    std::string err;
    if (r.node.open(dir, &err)) {
      if (!errors.empty())
        framework_note("node", "registry", dir, true, "the default was unusable: " + errors);
      opened = true;
      break;
    }
    errors += (errors.empty() ? "" : "; ") + err;
  }
  if (!opened) {
    warn_once("node", "node registry: " + errors +
                          "; this process's share of the node is not "
                          "divided with other governed processes");
    framework_note("node", "registry", r.opt.node_dir.empty() ? "default" : r.opt.node_dir, false,
                   "unusable, not joined: " + errors);
    return;
  }
  r.node_member = true;
  r.membership = gov::MembershipState();
  // Not a member yet: the whole budget is in force (a join that leaves it so changes nothing).
  for (const gov::NodeCore& core : node_cores_of(r.full_budget)) r.node_cpus.push_back(core.cpu);
  r.node_worth = static_cast<int>(r.node_cpus.size());
  if (!r.opt.monitor && node_publish(r)) r.membership.member = true;
}

namespace {

void membership_note(Runtime& r, const char* what, const char* why, uint64_t t_ns) {
  char when[64];
  snprintf(when, sizeof when, "%.2f s after the first sample", static_cast<double>(t_ns) / 1e9);
  if (++r.node_changes <= 32)
    framework_note("membership", "node registry", what, true, std::string(why) + "; " + when);
  log::info(1, "node: %s (%s)", what, why);
}

// Whether a child process of ours runs as a rank that a launcher describes (and
// ours does not, or this process would not be in the registry): this process is
// a launcher (torchrun's agent, a script that starts ranks), whose ranks divide
// the node themselves, so it never counts. Children started by fork and exec
// are found here; posix_spawn's are seen at the call (spawn_cpus). Reads
// /proc/self/task/*/children and each child's /proc/<pid>/environ, on the
// monitor thread; false when they cannot be read.
bool children_are_ranks() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return false;
  bool found = false;
  std::string env, unused;
  std::vector<long> pids;
  // Children belong to the thread that forked them; launchers fork from a few
  // threads, and a process of thousands of threads is not read whole each time.
  int looked = 0;
  while (!found && looked < 256) {
    struct dirent* t = readdir(tasks);
    if (!t) break;
    if (t->d_name[0] == '.') continue;
    ++looked;
    pids.clear();
    task_children(t->d_name, &pids);
    for (size_t k = 0; k < pids.size() && !found; ++k) {
      if (!cache::file_read_capped("/proc/" + std::to_string(pids[k]) + "/environ", 1u << 20, &env,
                                   &unused))
        continue;
      std::vector<char*> envp;  // environ's NUL-separated strings, as an envp
      for (size_t i = 0; i < env.size(); i += strlen(&env[i]) + 1) envp.push_back(&env[i]);
      envp.push_back(nullptr);
      found = env_names_a_rank(envp.data());
    }
  }
  closedir(tasks);
  return found;
}

// Records which members this sample's scan lists; returns, for the report,
// "; at member sample N" and each member gone since the last scan with the
// last sample that listed it.
std::string node_listing_change(Runtime& r, const std::vector<gov::NodeMember>& members,
                                uint64_t sample) {
  std::string gone;
  for (const auto& [pid, last] : r.node_listed) {
    bool listed = false;
    for (const gov::NodeMember& m : members) listed = listed || m.pid == pid;
    if (!listed)
      gone += (gone.empty() ? "" : ", ") + std::to_string(pid) + " last listed at sample " +
              std::to_string(last);
  }
  r.node_listed.clear();
  for (const gov::NodeMember& m : members) r.node_listed.emplace_back(m.pid, sample);
  return "; at member sample " + std::to_string(sample) +
         (gone.empty() ? std::string() : "; gone: " + gone);
}

}  // namespace

// On the monitor thread, every sample: join or leave by demand, and follow
// members that arrived or left.
void node_tick(uint64_t t_ns, double busy_cpus) {
  Runtime* r = g;
  if (!r || !r->node_member || r->state.load(std::memory_order_acquire) != kActive) return;
  fail_open("node-tick", [&] {
    gov::MembershipInput in;
    in.t_ns = t_ns;
    in.busy_cpus = busy_cpus;
    // Threads it made have run: a pool that exists and never worked (OpenBLAS's
    // pool in a helper process that only imported numpy) does not make one.
    in.parallel = monitor::threads_ran();
    in.launcher = r->launcher.load(std::memory_order_relaxed);
    in.announced = r->announced.exchange(false, std::memory_order_acq_rel);
    in.fixed_pools = monitor::fixed_pools_noted();
    in.serves = monitor::event_loop_seen();
    in.exiting = r->exiting.load(std::memory_order_acquire);
    gov::MembershipConfig c;
    c.idle_leave_ns = static_cast<uint64_t>(r->opt.node_idle_ms) * 1000000ull;
    // Before joining, and every fifth sample: has it become a launcher? (Also while it is
    // not a member: a launcher idle while its ranks run must not join once they are gone.)
    const bool would_join =
        !r->membership.member && !in.exiting && in.parallel && busy_cpus >= c.busy_cpus;
    if (!in.launcher && (would_join || ++r->child_checks % 5 == 0) && children_are_ranks()) {
      r->launcher.store(true, std::memory_order_relaxed);
      in.launcher = true;
    }
    const bool was = r->membership.member;
    const gov::MembershipStep step = gov::membership_step(&r->membership, in, c);
    if (step.change == gov::MembershipChange::kJoin) {
      if (node_publish(*r)) {
        r->member_now.store(true, std::memory_order_release);
        membership_note(*r, "joined", step.why, t_ns);
      } else {
        r->membership.member = false;
        r->node_member = false;  // warned once; keep the whole budget
      }
      return;
    }
    if (step.change == gov::MembershipChange::kLeave) {
      r->member_now.store(false, std::memory_order_release);
      r->node.leave();
      expected_update(*r, nullptr, 0);
      gov::NodeShare all;
      for (const gov::NodeCore& core : node_cores_of(r->full_budget)) all.cpus.push_back(core.cpu);
      all.note = std::string("node registry: left (") + step.why + "), every core again";
      node_apply(*r, all);
      char held[48] = "";
      if (!in.launcher)
        snprintf(held, sizeof held, " (held %.1f s idle)", static_cast<double>(step.hold_ns) / 1e9);
      membership_note(*r, "left", (std::string(step.why) + held).c_str(), t_ns);
      return;
    }
    if (!was) {
      r->node_listed.clear();
      return;
    }
    const uint64_t sample = ++r->node_samples;
    node::ScanResult s;
    if (r->node.scan(&s)) {
      expected_update(*r, &s.members, s.self);
      node_apply(*r, gov::node_share(s.members, s.self),
                 node_listing_change(*r, s.members, sample));
    }
    node_entry_refresh(*r, t_ns);
  });
}

bool node_shared() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return false;
  // The monitor thread re-reads the node registry every sample; the share in
  // force is at most one sample old.
  const std::shared_ptr<const InForce> now = r->owner.current();
  if (now && now->budget.local_size > 1) return true;
  std::lock_guard<std::mutex> lock(r->mu);
  return !r->expected_share.cpus.empty();
}

bool node_may_share() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return false;
  // Whether activation took part in the registry (fixed before the state is active;
  // node_member itself may change on the monitor thread).
  if (r->opt.node && r->opt.mode == opt::Mode::kGovern && r->opt.topology.empty() &&
      r->node_registry && !r->forked_child)
    return true;
  const std::shared_ptr<const InForce> now = r->owner.current();
  return now && now->budget.local_size > 1;
}

gov::Plan fixed_pools_plan(std::string* why) {
  Runtime* r = g;
  if (why) why->clear();
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return plan();
  const std::shared_ptr<const InForce> now = r->owner.current();
  if (!now) return plan();
  gov::NodeShare expected;
  {
    std::lock_guard<std::mutex> lock(r->mu);
    expected = r->expected_share;
  }
  // Only a smaller share than the one in force: never more than the budget allows now.
  if (expected.cpus.empty() || static_cast<int>(expected.cpus.size()) > now->budget.cores)
    return now->plan;
  if (why) *why = expected.note;
  // The calibration's warnings were given when the plan in force was made.
  std::vector<std::string> warnings;
  bool found = false;
  return plan_on(*r, share_budget(*r, expected), expected.overlap ? expected.cores_worth : 0,
                 now->graph, &warnings, &found);
}

void fixed_pools_prepare() {
  monitor::fixed_pools_note();
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive || !r->node_member ||
      !r->opt.monitor || r->member_now.load(std::memory_order_acquire))
    return;
  // Join through the monitor thread (it alone keeps the membership), and wait
  // for it a few samples at most: the pools are then sized from this
  // process's share instead of the whole budget, and neighbours starting now
  // see this process in the registry before its work runs. A monitor that
  // does not answer in time (paused, a loaded node) costs the wait and
  // nothing else: the plan in force is used.
  r->announced.store(true, std::memory_order_release);
  const long wait_ms = 3L * r->opt.monitor_ms;
  for (long waited = 0; waited < wait_ms; waited += 5) {
    if (r->member_now.load(std::memory_order_acquire) || r->launcher.load()) return;
    const timespec ts{0, 5 * 1000000L};
    nanosleep(&ts, nullptr);
  }
}

void fixed_pool_made(const std::string& framework, const std::string& pool, int threads) {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return;
  std::lock_guard<std::mutex> lock(r->mu);
  if (r->fixed_pools.size() < 16) r->fixed_pools.push_back({framework, pool, threads});
}

unsigned plan_generation() {
  Runtime* r = g;
  if (!r || r->state.load(std::memory_order_acquire) != kActive) return 0;
  return r->generation.load(std::memory_order_acquire);
}

}  // namespace pw::rt
