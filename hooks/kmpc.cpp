// hooks/kmpc: the C side of libomp's variadic fork hooks (see kmpc_x86_64.S).
#include "hooks/omp.h"
#include "hooks/slots.h"

// Called by the stubs with the caller's return address; applies the team cap
// and returns the original to jump to.
extern "C" __attribute__((visibility("hidden"))) void* pw_kmpc_fork_call_prehook(
    const void* caller_pc) {
  pw::hooks::omp_before_region(caller_pc);
  void* real = reinterpret_cast<void*>(PW_REAL_AT(__kmpc_fork_call, caller_pc));
  if (!real) PW_MISSING(__kmpc_fork_call);  // the stub traps (ud2): nothing to call
  return real;
}

extern "C" __attribute__((visibility("hidden"))) void* pw_kmpc_fork_teams_prehook(
    const void* caller_pc) {
  pw::hooks::omp_before_region(caller_pc);
  void* real = reinterpret_cast<void*>(PW_REAL_AT(__kmpc_fork_teams, caller_pc));
  if (!real) PW_MISSING(__kmpc_fork_teams);  // the stub traps (ud2), as for fork_call
  return real;
}
