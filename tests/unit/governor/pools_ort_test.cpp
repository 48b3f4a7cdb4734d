// An ONNX Runtime session's thread options (governor/pools_ort.h; hooks/ort.cpp
// asks for Python's sessions and the C API's).
#include "governor/pools_ort.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

PoolContext context(int pools, int threads, bool governing, bool override_user) {
  PoolContext c;
  c.pools = pools;
  c.threads = threads;
  c.governing = governing;
  c.override_user = override_user;
  return c;
}

OrtUserOptions user(int intra, int inter, bool parallel, int spin) {
  OrtUserOptions u;
  u.intra = intra;
  u.inter = inter;
  u.parallel = parallel;
  u.spin = spin;
  return u;
}

TEST(OrtSessionDecide, Table) {
  struct Case {
    const char* what;
    int pools, threads;
    bool governing, override_user, shared;
    OrtUserOptions u;
    OrtPlanned want;  // intra, inter, parallel, spin
    bool mode_asked, inter_asked, spin_asked;
  };
  const Case kCases[] = {
      {"one pool: threads per pool only",
       1,
       2,
       true,
       false,
       false,
       user(0, 0, false, -1),
       {2, -1, -1, -1},
       false,
       false,
       false},
      {"two pools: parallel mode, inter-op = pools",
       2,
       1,
       true,
       false,
       false,
       user(0, 0, false, -1),
       {1, 2, 1, -1},
       true,
       true,
       false},
      {"a shared node: spinning off",
       1,
       2,
       true,
       false,
       true,
       user(0, 0, false, -1),
       {2, -1, -1, 0},
       false,
       false,
       true},
      {"the program's intra-op count kept",
       1,
       2,
       true,
       false,
       false,
       user(4, 0, false, -1),
       {-1, -1, -1, -1},
       false,
       false,
       false},
      {"the program's intra-op count replaced (OVERRIDE)",
       1,
       2,
       true,
       true,
       false,
       user(4, 0, false, -1),
       {2, -1, -1, -1},
       false,
       false,
       false},
      {"the program's sequential mode is no choice: parallel set",
       2,
       1,
       true,
       false,
       false,
       user(0, 0, false, -1),
       {1, 2, 1, -1},
       true,
       true,
       false},
      {"the program's parallel mode kept, its inter-op decided",
       2,
       1,
       true,
       false,
       false,
       user(0, 3, true, -1),
       {1, -1, -1, -1},
       true,
       true,
       false},
      {"the program's parallel mode, inter-op at its default: the pools",
       2,
       1,
       true,
       false,
       false,
       user(0, 0, true, -1),
       {1, 2, -1, -1},
       true,
       true,
       false},
      {"the program's spinning kept on a shared node",
       1,
       2,
       true,
       false,
       true,
       user(0, 0, false, 1),
       {2, -1, -1, -1},
       false,
       false,
       true},
      {"the program's spinning turned off (OVERRIDE)",
       1,
       2,
       true,
       true,
       true,
       user(0, 0, false, 1),
       {2, -1, -1, 0},
       false,
       false,
       true},
      {"observe mode: nothing set, inter-op not asked",
       2,
       1,
       false,
       false,
       true,
       user(0, 0, false, -1),
       {-1, -1, -1, -1},
       true,
       false,
       true},
      {"observe mode, the program's parallel mode: its inter-op asked",
       2,
       1,
       false,
       false,
       false,
       user(0, 0, true, -1),
       {-1, -1, -1, -1},
       true,
       true,
       false},
  };
  for (const Case& c : kCases) {
    const OrtSessionDecision d = ort_session_decide(
        context(c.pools, c.threads, c.governing, c.override_user), c.u, c.shared);
    EXPECT_EQ(d.set.intra, c.want.intra) << c.what;
    EXPECT_EQ(d.set.inter, c.want.inter) << c.what;
    EXPECT_EQ(d.set.parallel, c.want.parallel) << c.what;
    EXPECT_EQ(d.set.spin, c.want.spin) << c.what;
    EXPECT_TRUE(d.intra.asked) << c.what;
    EXPECT_EQ(d.intra.user_set, c.u.intra > 0) << c.what;
    EXPECT_EQ(d.mode.asked, c.mode_asked) << c.what;
    EXPECT_EQ(d.inter.asked, c.inter_asked) << c.what;
    EXPECT_EQ(d.spin.asked, c.spin_asked) << c.what;
  }
}

TEST(OrtSessionPools, Table) {
  struct Case {
    const char* what;
    OrtUserOptions u;
    OrtPlanned planned;
    SessionPools want;  // intra, inter, parallel, spin
  };
  const Case kCases[] = {
      {"all from parwidth", user(0, 0, false, -1), {2, 2, 1, 0}, {2, 2, 1, 0}},
      {"all ORT's defaults", user(0, 0, false, -1), {-1, -1, -1, -1}, {-1, -1, -1, -1}},
      {"the program's own, nothing on top", user(4, 3, true, 1), {-1, -1, -1, -1}, {4, 3, 1, 1}},
      {"parwidth's on top of the program's", user(4, 3, true, 1), {2, 2, 1, 0}, {2, 2, 1, 0}},
      {"the program's sequential mode reads as ORT's default",
       user(0, 0, false, 0),
       {1, -1, -1, -1},
       {1, -1, -1, 0}},
  };
  for (const Case& c : kCases) {
    const SessionPools s = ort_session_pools(c.u, c.planned);
    EXPECT_TRUE(s == c.want) << c.what << ": intra " << s.intra << " inter " << s.inter
                             << " parallel " << s.parallel << " spin " << s.spin;
  }
}

}  // namespace
}  // namespace pw::gov
