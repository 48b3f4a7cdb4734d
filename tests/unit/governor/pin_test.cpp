// Whether a new thread is pinned, and why not (governor/pin.h; hooks/pthread.cpp asks it).
#include "governor/pin.h"

#include <gtest/gtest.h>

#include <string>

namespace pw::gov {
namespace {

TEST(PinVerdict, Table) {
  struct Case {
    const char* what;
    PinFacts f;  // governing, pin_off, user_affinity, runtime_binding, creator_in_pool
    bool pin, widen;
    const char* why;  // a word the reason holds; nullptr: no reason
  };
  const Case kCases[] = {
      {"governed thread: pinned", {true, false, false, false, false}, true, false, nullptr},
      {"created by a pool member: pinned", {true, false, false, false, true}, true, false, nullptr},
      {"observe mode: not pinned, nothing to say",
       {false, false, false, false, false},
       false,
       false,
       nullptr},
      {"PARWIDTH_PIN=none", {true, true, false, false, false}, false, false, nullptr},
      {"the creator's affinity kept", {true, false, true, false, false}, false, false, "creator"},
      {"the creator's affinity wins over the runtime's binding",
       {true, false, true, true, true},
       false,
       false,
       "creator"},
      {"the OpenMP runtime binds it", {true, false, false, true, false}, false, false, "OpenMP"},
      {"the runtime binds it, made by a pinned pool member: widened",
       {true, false, false, true, true},
       false,
       true,
       "OpenMP"},
      {"the runtime binds it, PIN=none: the creator was never pinned",
       {true, true, false, true, true},
       false,
       false,
       "OpenMP"},
      {"observe mode: the reasons are still reported",
       {false, false, false, true, true},
       false,
       false,
       "OpenMP"},
  };
  for (const Case& c : kCases) {
    const PinVerdict v = pin_verdict(c.f);
    EXPECT_EQ(v.pin, c.pin) << c.what;
    EXPECT_EQ(v.widen, c.widen) << c.what;
    if (!c.why) {
      EXPECT_EQ(v.why, nullptr) << c.what;
    } else {
      ASSERT_NE(v.why, nullptr) << c.what;
      EXPECT_NE(std::string(v.why).find(c.why), std::string::npos) << c.what;
    }
  }
}

TEST(PinInForce, Table) {
  struct Case {
    const char* what;
    PinMode chosen;
    bool children, forked;
    PinMode in_force;
  };
  const Case kCases[] = {
      {"one core per thread, alone", PinMode::kCore, false, false, PinMode::kCore},
      {"one core per thread, children running: the pool's cores", PinMode::kCore, true, false,
       PinMode::kPool},
      {"a forked child beside its parent: the pool's cores", PinMode::kCore, false, true,
       PinMode::kPool},
      {"a forked child with children of its own", PinMode::kCore, true, true, PinMode::kPool},
      {"PARWIDTH_PIN=pool stands", PinMode::kPool, true, false, PinMode::kPool},
      {"PARWIDTH_PIN=pool, alone", PinMode::kPool, false, false, PinMode::kPool},
      {"PARWIDTH_PIN=none stands: never pinned because of children", PinMode::kNone, true, true,
       PinMode::kNone},
      {"PARWIDTH_PIN=none, alone", PinMode::kNone, false, false, PinMode::kNone},
  };
  for (const Case& c : kCases)
    EXPECT_EQ(pin_in_force(c.chosen, c.children, c.forked), c.in_force) << c.what;
}

TEST(ChildrenHold, OnAtOnceOffAfterHoldSamplesWithoutOne) {
  ChildrenHold h;
  EXPECT_FALSE(children_step(&h, false, 3)) << "no child yet: nothing changes";
  EXPECT_FALSE(h.on);
  EXPECT_TRUE(children_step(&h, true, 3)) << "the first sample with a child turns it on";
  EXPECT_TRUE(h.on);
  EXPECT_FALSE(children_step(&h, true, 3));
  // A gap shorter than the hold (workers started again): stays on.
  EXPECT_FALSE(children_step(&h, false, 3));
  EXPECT_FALSE(children_step(&h, false, 3));
  EXPECT_TRUE(h.on);
  EXPECT_FALSE(children_step(&h, true, 3)) << "seen again: the count of absent samples restarts";
  EXPECT_EQ(h.absent, 0);
  EXPECT_FALSE(children_step(&h, false, 3));
  EXPECT_FALSE(children_step(&h, false, 3));
  EXPECT_TRUE(children_step(&h, false, 3)) << "the third sample in a row without one: off";
  EXPECT_FALSE(h.on);
  EXPECT_FALSE(children_step(&h, false, 3));
}

TEST(ChildrenHold, HoldOfZeroOrOneTurnsOffAtTheFirstSampleWithout) {
  for (int hold : {0, 1}) {
    ChildrenHold h;
    EXPECT_TRUE(children_step(&h, true, hold));
    EXPECT_TRUE(children_step(&h, false, hold)) << hold;
    EXPECT_FALSE(h.on) << hold;
  }
}

}  // namespace
}  // namespace pw::gov
