// Whose binding the OpenMP runtimes' threads follow, and what parwidth does
// about libomp's own, and when a thread takes a new team size
// (governor/pools_omp.h; hooks/omp.cpp and pthread.cpp ask).
#include "governor/pools_omp.h"

#include <gtest/gtest.h>

#include <string>

namespace pw::gov {
namespace {

PoolContext context(bool governing, bool pin_off) {
  PoolContext c;
  c.pools = 2;
  c.threads = 2;
  c.governing = governing;
  c.pin_off = pin_off;
  return c;
}

TEST(OmpBindingDecide, Table) {
  struct Case {
    const char* what;
    bool governing, pin_off, user_binding, display;
    OmpBinding want;
  };
  const Case kCases[] = {
      {"nothing set: libomp's binding goes off, parwidth pins", true, false, false, false,
       OmpBinding::kOff},
      {"KMP_AFFINITY or OMP_PROC_BIND set: the user's binding stands", true, false, true, false,
       OmpBinding::kUser},
      {"OMP_DISPLAY_AFFINITY set: libomp keeps its own", true, false, false, true,
       OmpBinding::kLibompOwn},
      {"both: the user's binding is named first", true, false, true, true, OmpBinding::kUser},
      {"observe mode: nothing changes", false, false, false, false, OmpBinding::kNone},
      {"observe mode with a user binding: nothing to keep", false, false, true, false,
       OmpBinding::kNone},
      {"PARWIDTH_PIN=none: parwidth pins nothing", true, true, false, false, OmpBinding::kNone},
      {"PARWIDTH_PIN=none with a display variable", true, true, false, true, OmpBinding::kNone},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(omp_binding_decide(context(c.governing, c.pin_off), c.user_binding, c.display),
              c.want)
        << c.what;
}

TEST(LibompFirstSight, Table) {
  struct Case {
    const char* what;
    OmpBinding binding;
    bool reads_api, at_fork;
    LibompStep want;
  };
  const Case kCases[] = {
      {"linked in, seen at activation: off before any region", OmpBinding::kOff, false, false,
       LibompStep::kTurnOff},
      {"dlopen'ed, seen at its first region: off", OmpBinding::kOff, false, true,
       LibompStep::kTurnOff},
      {"the program reads affinity, at activation: wait for its first region", OmpBinding::kOff,
       true, false, LibompStep::kNothing},
      {"the program reads affinity, first region: its own binding stays, initialised wide",
       OmpBinding::kOff, true, true, LibompStep::kKeepOwn},
      {"the user's binding, first region: initialised wide", OmpBinding::kUser, false, true,
       LibompStep::kInitWide},
      {"the user's binding, at activation: nothing yet", OmpBinding::kUser, false, false,
       LibompStep::kNothing},
      {"display variable set, first region: initialised wide", OmpBinding::kLibompOwn, false, true,
       LibompStep::kInitWide},
      {"display variable set, at activation: nothing yet", OmpBinding::kLibompOwn, false, false,
       LibompStep::kNothing},
      {"the imports only matter with the binding going off", OmpBinding::kUser, true, true,
       LibompStep::kInitWide},
      {"not governed: nothing at a region", OmpBinding::kNone, false, true, LibompStep::kNothing},
      {"not governed: nothing at activation", OmpBinding::kNone, false, false,
       LibompStep::kNothing},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(libomp_first_sight(c.binding, c.reads_api, c.at_fork), c.want) << c.what;
}

TEST(OmpRuntimeOf, Table) {
  struct Case {
    const char* path;
    OmpRuntime want;
  };
  const Case kCases[] = {
      {"/usr/lib/x86_64-linux-gnu/libgomp.so.1", OmpRuntime::kGnu},
      {"/venv/lib/python3.11/site-packages/torch.libs/libgomp-a34b3233.so.1", OmpRuntime::kGnu},
      {"/usr/lib/llvm-14/lib/libomp.so.5", OmpRuntime::kLlvm},
      {"libomp.so", OmpRuntime::kLlvm},
      {"/venv/lib/libiomp5.so", OmpRuntime::kLlvm},
      {"/usr/lib/x86_64-linux-gnu/libopenblas.so.0", OmpRuntime::kNone},
      {"/opt/libgomp/libfoo.so", OmpRuntime::kNone},  // the folder's name does not count
      {"", OmpRuntime::kNone},                        // the main program
      {nullptr, OmpRuntime::kNone},                   // no object
  };
  for (const Case& c : kCases)
    EXPECT_EQ(omp_runtime_of(c.path), c.want) << (c.path ? c.path : "(null)");
}

TEST(OmpThreadLeft, Table) {
  struct Case {
    const char* what;
    OmpBinding binding;
    bool libomp_own;
    OmpRuntime creator;
    bool left;
    const char* why;  // a word of the reason; nullptr: none
  };
  const Case kCases[] = {
      {"the user's binding: libgomp's threads left to it", OmpBinding::kUser, false,
       OmpRuntime::kGnu, true, "user"},
      {"the user's binding: libomp's threads left to it", OmpBinding::kUser, false,
       OmpRuntime::kLlvm, true, "user"},
      {"the user's binding: other threads are pinned", OmpBinding::kUser, false, OmpRuntime::kNone,
       false, nullptr},
      {"libomp keeps its own: its threads left to it", OmpBinding::kLibompOwn, true,
       OmpRuntime::kLlvm, true, "libomp"},
      {"libomp keeps its own: libgomp's threads are pinned", OmpBinding::kLibompOwn, true,
       OmpRuntime::kGnu, false, nullptr},
      {"libomp could not be turned off in time: its threads left to it", OmpBinding::kOff, true,
       OmpRuntime::kLlvm, true, "libomp"},
      {"binding off: libomp's threads are pinned", OmpBinding::kOff, false, OmpRuntime::kLlvm,
       false, nullptr},
      {"binding off: libgomp's threads are pinned", OmpBinding::kOff, false, OmpRuntime::kGnu,
       false, nullptr},
      {"not governed: nothing is left, nothing pinned either", OmpBinding::kNone, false,
       OmpRuntime::kLlvm, false, nullptr},
  };
  for (const Case& c : kCases) {
    const OmpThreadLeft t = omp_thread_left(c.binding, c.libomp_own, c.creator);
    EXPECT_EQ(t.left, c.left) << c.what;
    if (c.why) {
      EXPECT_NE(std::string(t.why ? t.why : "").find(c.why), std::string::npos) << c.what;
    } else {
      EXPECT_EQ(t.why, nullptr) << c.what;
    }
  }
}

TEST(OmpTeamResize, Table) {
  struct Case {
    const char* what;
    bool set_before;
    bool count_guarded;
    bool apply;
  };
  const Case kCases[] = {
      {"a thread's first size: applied", false, false, true},
      {"a thread's first size with torch.compile loaded: applied", false, true, true},
      {"a later plan or cap: applied", true, false, true},
      {"a later plan or cap with torch.compile loaded: kept", true, true, false},
  };
  for (const Case& c : kCases) {
    const OmpTeamResize r = omp_team_resize(c.set_before, c.count_guarded);
    EXPECT_EQ(r.apply, c.apply) << c.what;
    if (c.apply) {
      EXPECT_EQ(r.why, nullptr) << c.what;
    } else {
      EXPECT_NE(std::string(r.why ? r.why : "").find("torch.compile"), std::string::npos) << c.what;
    }
  }
}

TEST(OmpTeamReachesMkl, Table) {
  struct Case {
    const char* what;
    SettingVerdict team;
    bool mkl_user_set;
    bool reaches;
  };
  const Case kCases[] = {
      {"the cap applied to the thread: MKL's count follows", SettingVerdict::kApply, false, true},
      {"the user's count replaced (PARWIDTH_OVERRIDE=1): MKL's follows", SettingVerdict::kReplace,
       false, true},
      {"MKL_NUM_THREADS set: MKL's count stands", SettingVerdict::kApply, true, false},
      {"the thread's count is the program's: nothing changes", SettingVerdict::kKeep, false, false},
      {"no plan: nothing changes", SettingVerdict::kNoPlan, false, false},
  };
  for (const Case& c : kCases) {
    SettingDecision d;
    d.verdict = c.team;
    d.value = 1;
    EXPECT_EQ(omp_team_reaches_mkl(d, c.mkl_user_set), c.reaches) << c.what;
  }
}

}  // namespace
}  // namespace pw::gov
