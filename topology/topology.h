// topology/: the machine's sockets, cores and PUs, and this process's CPU budget.
//
// Error contract (every function here): returns a Status and writes results
// only through its out-parameters, and only on kOk. On failure `err`, when not
// null, receives one line saying why. kUnsupported means "this backend cannot
// run here" (hwloc missing, no cgroup v2 mount): the caller falls back.
// kInvalid means the input was read and makes no sense (garbage in cpu.max, a
// broken XML file): the caller must not guess, it runs ungoverned. Nothing
// here throws, aborts or prints.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pw::topo {

// The hwloc that the topology backend dlopens (RTLD_LOCAL), by soname.
inline constexpr char kHwlocLibrary[] = "libhwloc.so.15";

// Where Linux lists the CPUs (topology, caches) in sysfs.
inline constexpr char kSysfsCpuRoot[] = "/sys/devices/system/cpu";

// Statuses returned here: kOk, kUnsupported, kInvalid, kIoError.
using Status = pw::Status;

// One physical core and its hardware threads (PUs, by OS index, ascending).
struct Core {
  int socket = 0;  // index of its Socket in the list that holds it (Machine or Budget::sockets)
  std::vector<int> pus;
};

struct Socket {
  int os_index = 0;
  std::vector<Core> cores;  // ascending by first PU
};

// The machine as a backend saw it (all PUs, whatever this process may use).
struct Machine {
  std::vector<Socket> sockets;
  std::string source;  // "hwloc", "sysfs", "xml:<path>", "synthetic:<desc>"
};

// Loads the machine. spec: "" = this machine (hwloc, else sysfs);
// "synthetic:<hwloc synthetic description>"; anything else = an hwloc XML file.
Status machine_load(const std::string& spec, Machine* out, std::string* err);

// The machine as a short text, for a per-boot cache (an hwloc load costs
// milliseconds at each activation; the machine does not change while the
// key holds). machine_cache_key: this boot's id and the kernel's online and
// possible CPU lists (hot-plugging a CPU changes it); false when unreadable.
// machine_parse: kInvalid (with *err) unless `text` is a whole, well-formed
// file written by machine_format under the same key.
bool machine_cache_key(std::string* key);
std::string machine_format(const Machine& m, const std::string& key);
Status machine_parse(const std::string& text, const std::string& key, Machine* out,
                     std::string* err);

// cgroup v2 limits, read from a cgroup directory upwards while the parent is
// still a cgroup (has cgroup.controllers). cpuset: cpuset.cpus.effective of
// the leaf. quota: the lowest ceil-free quota/period of every cpu.max on the
// way up (a parent's cpu.max binds its children too).
struct CgroupLimits {
  bool have_cpuset = false;
  std::vector<int> cpuset;  // ascending
  std::string cpuset_from;  // the file it came from
  double quota_cpus = 0;    // 0 = no quota
  std::string quota_from;
};
// The directory of this process's cgroup: <mount>/<path from /proc/self/cgroup>.
Status cgroup_self_dir(std::string* dir, std::string* err);
Status cgroup_read(const std::string& leaf_dir, CgroupLimits* out, std::string* err);
// This process's limits from every hierarchy: cgroup_self_dir + cgroup_read for v2, plus the v1
// cpu controller's cpu.cfs_quota_us (hybrid and v1 hosts; the lowest quota wins). kUnsupported
// when there is neither. v1 cpusets are not read: sched_getaffinity already reflects them.
Status cgroup_self_limits(CgroupLimits* out, std::string* err);

// This process's affinity mask (sched_getaffinity, any CPU count), ascending.
Status affinity_read(std::vector<int>* out, std::string* err, pid_t tid = 0);

// What restricts the budget, beyond the machine itself.
struct BudgetInputs {
  bool use_affinity = true;   // false when planning for a described machine
  std::vector<int> affinity;  // sched_getaffinity of the process
  bool use_cgroup = true;
  CgroupLimits cgroup;
  std::vector<int> restrict_cpus;  // PARWIDTH_CPUS; empty = none
  bool smt = false;                // keep SMT siblings as separate slots
  int local_rank = 0;              // this process's share of the node
  int local_size = 1;
};

// This process's CPU budget: the allowed PUs grouped socket -> core -> PU,
// cores in socket-major order, capped by the cgroup quota, then this
// process's share when local_size > 1.
struct Budget {
  std::vector<Socket> sockets;  // only sockets with at least one allowed core
  std::vector<int> cpus;        // every allowed PU of the kept cores, ascending
  int cores = 0;                // physical cores kept
  double quota_cpus = 0;        // 0 = none
  int local_rank = 0;
  int local_size = 1;
  std::vector<std::string> notes;  // where each limit came from, one line each
};
Status budget_compute(const Machine& m, const BudgetInputs& in, Budget* out, std::string* err);

// "0-3,8,10-11" <-> {0,1,2,3,8,10,11}. Parsing rejects garbage (kInvalid).
Status cpulist_parse(const std::string& text, std::vector<int>* out, std::string* err);
std::string cpulist_format(const std::vector<int>& cpus);

// The level-2 data cache of the physical core that `cpu` belongs to, in bytes, from
// root/cpuN/cache/index*/ (root: normally kSysfsCpuRoot); a cache shared by
// several cores counts as its share per core. kUnsupported where sysfs lists none.
Status l2_cache_per_core(const std::string& root, int cpu, int64_t* bytes, std::string* err);

}  // namespace pw::topo
