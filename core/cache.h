// core/cache: the per-user cache of calibrations and measured plans under
// XDG_CACHE_HOME/parwidth, else ~/.cache/parwidth.
//
// Files are read with O_NOFOLLOW and must be regular files of at most a size
// cap (their owner is not checked: the directory is under the user's own
// XDG_CACHE_HOME or HOME); they are written atomically (a 0600 temporary file
// in the same directory, O_EXCL|O_NOFOLLOW, then rename), so a reader sees a
// whole old file or a whole new one, never a mix. Before a write the directory
// is made 0700 and refused when it is a symlink or another user's. Failures are returned
// (false, or a warning line), never thrown; only running out of memory throws
// (std::bad_alloc, from the strings), which the runtime's callers catch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"
#include "governor/machine_model.h"
#include "governor/plan_store.h"
#include "topology/topology.h"

namespace pw::cache {

// The cache directory from the environment; "" when neither XDG_CACHE_HOME
// (absolute) nor HOME is set.
std::string cache_dir(const opt::EnvLookup& env);

// What names this machine and this budget in a calibration or a measured
// plan: the CPU model (/proc/cpuinfo, else the topology's source) with the
// machine's socket/core/PU counts, and the budget's shape (cores per socket,
// PUs, quota), not its CPU numbers, so that a job placed on other CPUs of the
// same machine reuses them. (A machine whose cores differ in kind, P and E
// cores, is not told apart by this.)
std::string machine_id(const topo::Machine& m);
std::string budget_id(const topo::Budget& b);

// calibration-<hash of machine and budget>.txt
std::string calibration_name(const std::string& machine, const std::string& budget);

// Reads a whole regular file of at most max_bytes; false with *why otherwise (a FIFO or
// device is refused without blocking). The cache's own files refuse a symlink; a file a
// user names (a model) may be one.
enum class Links { kRefuse, kFollow };
bool file_read_capped(const std::string& path, size_t max_bytes, std::string* out, std::string* why,
                      Links links = Links::kRefuse);

// Makes dir (0700) if missing; false when it is a symlink or another user's.
bool dir_make(const std::string& dir, std::string* why);

// Writes `text` to dir/name atomically (makes dir 0700 if missing).
bool file_write_atomic(const std::string& dir, const std::string& name, const std::string& text,
                       std::string* why);

// The CPU's traits for the built-in model (governor/machine_model.h): this
// CPU's, from /proc/cpuinfo, for this machine; none for a described one
// (synthetic or XML topology), which is not this CPU.
gov::CpuTraits cpu_traits(const topo::Machine& m);

// The machine model for this budget: the stored calibration when there is a
// valid one, else the built-in model. *warning is set (one line) when a file
// exists but is corrupt, foreign, for another budget, stale, or unreadable;
// *found says whether a valid calibration was used.
gov::MachineModel calibration_load(const std::string& dir, const std::string& machine,
                                   const std::string& budget, int cores, const gov::CpuTraits& cpu,
                                   int64_t now, bool* found, std::string* warning);

// ---------------------------------------------------------------- measured plans
// One file per (graph fingerprint, machine and budget):
// plan-<fingerprint>-<hash of machine and budget>.txt (governor/plan_store's format).
std::string plan_file_name(const std::string& machine, const std::string& budget,
                           const std::string& graph);

// The measured plan stored for this graph on this machine and budget. Missing:
// silently unknown. Unreadable (symlink, not a regular file, too large),
// corrupt, truncated, foreign: unknown with one line in *warning.
gov::MeasuredPlan measured_load(const std::string& dir, const std::string& machine,
                                const std::string& budget, const std::string& graph, int64_t now,
                                std::string* warning);

// Stores s atomically under its name; *path is where.
bool measured_store(const std::string& dir, const gov::StoredPlan& s, std::string* path,
                    std::string* why);

// Every plan-*.txt in dir, parsed without the machine/budget/graph checks
// (status and why say what is wrong with the ones that do not parse).
struct PlanFile {
  std::string name, path;
  Status status = Status::kCorrupt;
  std::string why;
  gov::StoredPlan stored;
};
std::vector<PlanFile> plan_files(const std::string& dir, int64_t now);

}  // namespace pw::cache
