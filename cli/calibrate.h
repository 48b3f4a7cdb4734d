// cli/calibrate: measuring and storing a calibration (shared by `calibrate`,
// `plan` and `run`, which calibrate once per machine and budget).
#pragma once

#include <string>

#include "core/planning.h"

namespace pw::cli {

// Measures the planned budget in a helper process and stores the result in dir.
bool calibrate_budget(const planning::Planned& p, const std::string& dir, bool progress,
                      std::string* path, std::string* why);

// Whether a valid calibration for this machine and budget is stored in dir.
bool calibration_stored(const planning::Planned& p, const std::string& dir);

// Calibrates the planned budget unless a valid calibration is stored, once even
// when several processes ask at the same time (a lock file in dir; the others
// wait, then find it stored). Progress on stderr. True when one is stored now;
// *why says why not ("" when the helper is not installed: nothing to say).
bool calibrate_if_missing(const planning::Planned& p, const std::string& dir, std::string* why);

}  // namespace pw::cli
