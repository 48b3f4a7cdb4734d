// cli/budget: the plan the preload would make for a command started from here
// (the same options from the environment, the same process tree).
#pragma once

#include <string>

#include "core/options.h"
#include "core/planning.h"

namespace pw::cli {

// Reads the options from this environment and plans the process as the
// preload would. False with *err when there is no budget (the preload would run
// ungoverned). *opt, when given, gets the options that were read.
bool budget_plan(planning::Planned* planned, std::string* err, opt::Options* opt = nullptr);

}  // namespace pw::cli
