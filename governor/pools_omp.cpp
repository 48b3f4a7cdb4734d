// governor/pools_omp: the OpenMP runtimes' binding against parwidth's pins.
#include "governor/pools_omp.h"

#include <cstring>

namespace pw::gov {

OmpBinding omp_binding_decide(const PoolContext& c, bool user_binding, bool display) {
  if (!c.governing || c.pin_off) return OmpBinding::kNone;
  if (user_binding) return OmpBinding::kUser;
  if (display) return OmpBinding::kLibompOwn;
  return OmpBinding::kOff;
}

LibompStep libomp_first_sight(OmpBinding binding, bool reads_affinity_api, bool at_fork) {
  if (binding == OmpBinding::kNone) return LibompStep::kNothing;
  const bool off = binding == OmpBinding::kOff && !reads_affinity_api;
  // At activation there is only something to do when the binding goes off;
  // otherwise its first region initialises it.
  if (!at_fork && !off) return LibompStep::kNothing;
  if (off) return LibompStep::kTurnOff;
  if (binding == OmpBinding::kOff) return LibompStep::kKeepOwn;  // the program reads affinity
  return LibompStep::kInitWide;
}

OmpRuntime omp_runtime_of(const char* path) {
  if (!path) return OmpRuntime::kNone;
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (!strncmp(base, "libomp", 6) || !strncmp(base, "libiomp", 7)) return OmpRuntime::kLlvm;
  if (!strncmp(base, "libgomp", 7)) return OmpRuntime::kGnu;
  return OmpRuntime::kNone;
}

OmpThreadLeft omp_thread_left(OmpBinding binding, bool libomp_own, OmpRuntime creator) {
  OmpThreadLeft t;
  if (binding == OmpBinding::kUser && creator != OmpRuntime::kNone) {
    t.left = true;
    t.why = "the user chose the OpenMP binding; the runtime's threads are left to it";
  } else if (libomp_own && binding != OmpBinding::kUser && creator == OmpRuntime::kLlvm) {
    t.left = true;
    t.why = "libomp keeps its own binding (the program reads thread affinity)";
  }
  return t;
}

bool omp_team_reaches_mkl(const SettingDecision& team, bool mkl_user_set) {
  return team.changes() && !mkl_user_set;
}

OmpTeamResize omp_team_resize(bool set_before, bool count_guarded) {
  OmpTeamResize r;
  if (set_before && count_guarded) {
    r.apply = false;
    r.why =
        "torch.compile guards compiled code on torch's thread count (a change fails a trace in "
        "progress and recompiles): each thread's OpenMP team size stays as first set; its "
        "threads move with the share";
  }
  return r;
}

}  // namespace pw::gov
