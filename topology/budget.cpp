// budget_compute: the machine narrowed by affinity, cgroup and PARWIDTH_CPUS, capped by the
// cgroup quota, then cut to this process's local share. Every limit leaves a note.
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <new>

#include "base/group_sizes.h"
#include "topology/internal.h"

namespace pw::topo {

namespace {

std::vector<int> intersect(const std::vector<int>& a, std::vector<int> b) {
  std::sort(b.begin(), b.end());
  std::vector<int> r;
  for (int x : a) {
    if (std::binary_search(b.begin(), b.end(), x)) r.push_back(x);
  }
  return r;
}

std::string count(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string number(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// One core in socket-major order, remembering where it came from.
struct Slot {
  int socket;  // index into Machine::sockets
  Core core;
};

Status compute(const Machine& m, const BudgetInputs& in, Budget* out, std::string* err) {
  Budget b;
  std::vector<int> allowed;
  size_t machine_cores = 0;
  for (const Socket& s : m.sockets) {
    machine_cores += s.cores.size();
    for (const Core& c : s.cores) allowed.insert(allowed.end(), c.pus.begin(), c.pus.end());
  }
  std::sort(allowed.begin(), allowed.end());
  b.notes.push_back("machine: " + count(m.sockets.size(), "socket") + ", " +
                    count(machine_cores, "core") + ", " + count(allowed.size(), "PU") + " (" +
                    m.source + ")");

  if (in.use_affinity) {
    allowed = intersect(allowed, in.affinity);
    std::string list = in.affinity.empty() ? "(empty)" : cpulist_format(in.affinity);
    b.notes.push_back("affinity: " + list + " (sched_getaffinity)");
  }
  if (in.use_cgroup && in.cgroup.have_cpuset) {
    allowed = intersect(allowed, in.cgroup.cpuset);
    b.notes.push_back("cgroup cpuset: " + cpulist_format(in.cgroup.cpuset) + " (" +
                      in.cgroup.cpuset_from + ")");
  }
  if (allowed.empty()) {
    std::string why;
    for (size_t i = 1; i < b.notes.size(); ++i) why += (i > 1 ? "; " : "") + b.notes[i];
    internal::err_set(err, "budget: no PU of the machine is allowed: " + why);
    return Status::kInvalid;
  }
  if (!in.restrict_cpus.empty()) {
    std::vector<int> r = intersect(allowed, in.restrict_cpus);
    if (r.empty()) {
      internal::err_set(err, "PARWIDTH_CPUS=" + cpulist_format(in.restrict_cpus) +
                                 " has none of the allowed CPUs " + cpulist_format(allowed));
      return Status::kInvalid;
    }
    allowed = std::move(r);
    b.notes.push_back("PARWIDTH_CPUS: " + cpulist_format(in.restrict_cpus));
  }

  std::vector<Slot> slots;
  for (size_t si = 0; si < m.sockets.size(); ++si) {
    for (const Core& c : m.sockets[si].cores) {
      Slot slot{static_cast<int>(si), Core{}};
      for (int pu : c.pus) {
        if (std::binary_search(allowed.begin(), allowed.end(), pu)) slot.core.pus.push_back(pu);
      }
      if (!slot.core.pus.empty()) {
        std::sort(slot.core.pus.begin(), slot.core.pus.end());
        slots.push_back(std::move(slot));
      }
    }
  }

  if (in.use_cgroup && in.cgroup.quota_cpus > 0) {
    // A quota of 1.5 CPUs is worth 2 busy threads: the scheduler throttles, it does not refuse.
    // The epsilon keeps an exact 2.0 from rounding up through floating-point noise.
    double q = in.cgroup.quota_cpus;
    size_t cap = static_cast<size_t>(std::max(1.0, ceil(q - 1e-9)));
    b.quota_cpus = q;
    b.notes.push_back("cgroup quota: " + number(q) + " cpus -> " + count(cap, "core") + " (" +
                      in.cgroup.quota_from + ")");
    // The first cores in socket-major order: one socket fills first, for locality.
    if (slots.size() > cap) slots.resize(cap);
  }

  if (in.local_size > 1) {
    if (in.local_rank < 0 || in.local_rank >= in.local_size) {
      internal::err_set(err, "local rank " + std::to_string(in.local_rank) + " is outside 0.." +
                                 std::to_string(in.local_size - 1));
      return Status::kInvalid;
    }
    size_t n = slots.size();
    size_t size = static_cast<size_t>(in.local_size);
    size_t rank = static_cast<size_t>(in.local_rank);
    std::vector<Slot> mine;
    if (size > n) {
      // More processes than cores: they share, round-robin.
      mine.push_back(slots[rank % n]);
    } else {
      // Balanced contiguous groups (n % size of them one core larger), placed so
      // that as few groups as possible span two sockets: 2 sockets x 3 cores in
      // 4 groups is 2,1,2,1, not 2,2,1,1.
      std::vector<int> socket_of;
      socket_of.reserve(slots.size());
      for (const Slot& s : slots) socket_of.push_back(s.socket);
      const std::vector<int> sizes = group_sizes(socket_of, static_cast<int>(size));
      long begin = 0;
      for (size_t i = 0; i < rank; ++i) begin += sizes[i];
      mine.assign(slots.begin() + begin, slots.begin() + begin + sizes[rank]);
    }
    slots = std::move(mine);
    b.local_rank = in.local_rank;
    b.local_size = in.local_size;
    b.notes.push_back("local share: rank " + std::to_string(in.local_rank) + " of " +
                      std::to_string(in.local_size) + " -> " + count(slots.size(), "core"));
  }

  if (slots.empty()) {
    internal::err_set(err, "budget: no core left");
    return Status::kInvalid;
  }
  int last_socket = -1;
  for (Slot& slot : slots) {
    if (slot.socket != last_socket) {
      Socket s;
      s.os_index = m.sockets[static_cast<size_t>(slot.socket)].os_index;
      b.sockets.push_back(std::move(s));
      last_socket = slot.socket;
    }
    slot.core.socket = static_cast<int>(b.sockets.size()) - 1;
    b.cpus.insert(b.cpus.end(), slot.core.pus.begin(), slot.core.pus.end());
    b.sockets.back().cores.push_back(std::move(slot.core));
  }
  std::sort(b.cpus.begin(), b.cpus.end());
  b.cores = static_cast<int>(slots.size());
  *out = std::move(b);
  return Status::kOk;
}

}  // namespace

Status budget_compute(const Machine& m, const BudgetInputs& in, Budget* out, std::string* err) {
  try {
    return compute(m, in, out, err);
  } catch (const std::bad_alloc&) {
    internal::err_set(err, "budget: out of memory");
    return Status::kIoError;
  }
}

}  // namespace pw::topo
