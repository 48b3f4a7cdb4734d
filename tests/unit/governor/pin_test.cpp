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

}  // namespace
}  // namespace pw::gov
