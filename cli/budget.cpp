// cli/budget: planning a command's process as the preload would (cli/budget.h).
#include "cli/budget.h"

#include <vector>

#include "cli/args.h"

namespace pw::cli {

bool budget_plan(planning::Planned* planned, std::string* err, opt::Options* opt) {
  std::vector<std::string> warns;  // the preload warns about options; a command need not repeat it
  const opt::Options o = opt::options_parse(env_get, &warns);
  if (opt != nullptr) *opt = o;
  return planning::plan_process(o, env_get, nullptr, planned, err);
}

}  // namespace pw::cli
