// governor/pools_omp: whose binding an OpenMP runtime's threads follow, and
// what parwidth does about libomp's own. Pure: hooks/omp.cpp and
// hooks/pthread.cpp gather the facts (environment, the calling object, the
// runtime's answers) and apply.
//
// parwidth pins the threads the runtimes create (hooks/pthread.cpp). LLVM's
// libomp and Intel's libiomp5 bind their threads themselves unless told not
// to, and would bind every thread inside the first pinned thread's core;
// libgomp binds nothing unless asked. A binding the user chose stands, and so
// does libomp's own where the program reads affinity through the OpenMP API
// (which needs it on); the runtimes' threads are then left to it.
#pragma once

#include "governor/pools.h"

namespace pw::gov {

// The variables by which a user chooses the runtimes' binding, in the order
// they are looked at (the report names the first one set).
constexpr const char* kOmpBindingVars[] = {"KMP_AFFINITY", "OMP_PROC_BIND", "OMP_PLACES",
                                           "GOMP_CPU_AFFINITY"};
// The variables that make libomp print its threads' affinity: with its binding
// off, libomp 14 aborts there.
constexpr const char* kOmpDisplayVars[] = {"OMP_DISPLAY_AFFINITY", "OMP_AFFINITY_FORMAT"};

enum class OmpBinding {
  kNone,       // parwidth pins nothing (observe mode, PARWIDTH_PIN=none): each runtime as it is
  kUser,       // the user chose a binding: kept; the runtimes' threads are not pinned by parwidth
  kLibompOwn,  // a display variable is set: libomp keeps its own; its threads are not pinned
  kOff,        // libomp's own binding goes off before it binds; parwidth pins the threads
};

// At activation. user_binding: a kOmpBindingVars variable is set (not empty);
// display: a kOmpDisplayVars one is.
OmpBinding omp_binding_decide(const PoolContext& c, bool user_binding, bool display);

// What to do with one libomp runtime the first time parwidth sees it (at
// activation for one linked into the program, at its first region otherwise).
enum class LibompStep {
  kNothing,   // nothing now: not governed, or nothing to change before its first region
  kTurnOff,   // turn its binding off (kmp_set_defaults), before it binds anything
  kKeepOwn,   // it keeps its own binding (the program reads affinity through the
              // OpenMP API); report it, and initialise it as kInitWide does
  kInitWide,  // initialise its affinity now with the process's CPU set, so that
              // a pinned initialising thread does not become its "whole machine"
};

// reads_affinity_api: an object of the program imports the OpenMP functions
// that read thread affinity or places (asked only where it matters: with the
// binding kOff). at_fork: seen at a region, not at activation.
LibompStep libomp_first_sight(OmpBinding binding, bool reads_affinity_api, bool at_fork);

// An OpenMP runtime's own object, by its file name (a wheel's renamed copy
// keeps the prefix).
enum class OmpRuntime {
  kNone,  // not an OpenMP runtime
  kGnu,   // libgomp
  kLlvm,  // LLVM's libomp or Intel's libiomp5
};
OmpRuntime omp_runtime_of(const char* path);

// A thread an OpenMP runtime creates, as governor/pin's `runtime_binding`:
// left to the runtime's binding, and why (the report's reason; nullptr when not).
struct OmpThreadLeft {
  bool left = false;
  const char* why = nullptr;
};
// libomp_own: libomp keeps its own binding (kLibompOwn, or a libomp that the
// first sight could not turn off, or kKeepOwn). creator: the runtime that
// creates the thread.
OmpThreadLeft omp_thread_left(OmpBinding binding, bool libomp_own, OmpRuntime creator);

// A thread whose team size was set for an earlier plan or cap, when a newer
// one comes into force. torch reads its thread count from this thread's
// OpenMP runtime (omp_get_max_threads); torch.compile (dynamo) records that
// count when it traces a function, fails the trace if the count changed
// meanwhile ("Global num_threads state changed while dynamo tracing") and
// recompiles every compiled function whose guard no longer holds. Once the
// program has called torch.compile (count_guarded), a thread keeps the size
// it has; its threads still move with the share.
struct OmpTeamResize {
  bool apply = true;
  const char* why = nullptr;  // when not applied: the report's reason
};
// set_before: this thread has a team size from parwidth or the program.
OmpTeamResize omp_team_resize(bool set_before, bool count_guarded);

// Whether a team size applied to a thread is given to MKL's count for that
// thread too. torch's at::set_num_threads sets both (omp_set_num_threads and
// MKL_Set_Num_Threads_Local), and from then on MKL's GEMMs run with MKL's
// count, whatever the thread's OpenMP one: without this a lowered cap or a
// smaller share leaves MKL's teams at the old size. A count the user gave MKL
// (MKL_NUM_THREADS) stands.
bool omp_team_reaches_mkl(const SettingDecision& team, bool mkl_user_set);

}  // namespace pw::gov
