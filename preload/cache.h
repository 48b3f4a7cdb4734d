// preload/cache: the per-user cache of calibrations (and, later, measured
// plans) under XDG_CACHE_HOME/parwidth, else ~/.cache/parwidth.
//
// Files are read with O_NOFOLLOW, must be regular files of this user and at
// most a size cap; they are written atomically (a 0600 temporary file in the
// same directory, O_EXCL|O_NOFOLLOW, then rename), so a reader sees a whole
// old file or a whole new one, never a mix. The directory is made 0700 and
// refused when it is a symlink or another user's. Nothing here throws.
#pragma once

#include <cstdint>
#include <string>

#include "governor/machine_model.h"
#include "preload/options.h"
#include "topology/topology.h"

namespace pw::cache {

// The cache directory from the environment; "" when neither XDG_CACHE_HOME
// (absolute) nor HOME is set.
std::string cache_dir(const opt::EnvLookup& env);

// What names this machine and this budget in a calibration: the CPU model
// (/proc/cpuinfo, else the topology's source) with the machine's PU count,
// and the budget's cpu list and quota.
std::string machine_id(const topo::Machine& m);
std::string budget_id(const topo::Budget& b);

// calibration-<hash of machine and budget>.txt
std::string calibration_name(const std::string& machine, const std::string& budget);

// Reads a whole file of at most max_bytes; false with *why otherwise.
bool file_read_capped(const std::string& path, size_t max_bytes, std::string* out,
                      std::string* why);

// Writes `text` to dir/name atomically (makes dir 0700 if missing).
bool file_write_atomic(const std::string& dir, const std::string& name, const std::string& text,
                       std::string* why);

// The machine model for this budget: the stored calibration when there is a
// valid one, else the built-in model. *warning is set (one line) when a file
// exists but is corrupt, foreign, for another budget, stale, or unreadable;
// *found says whether a valid calibration was used.
gov::MachineModel calibration_load(const std::string& dir, const std::string& machine,
                                   const std::string& budget, int cores, int64_t now, bool* found,
                                   std::string* warning);

}  // namespace pw::cache
