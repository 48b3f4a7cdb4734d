// base/status: every status has its own name, so a message or a report never shows two
// statuses alike, nor "unknown" for one that exists.
#include "base/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace pw {
namespace {

TEST(Status, EveryStatusHasItsOwnName) {
  std::set<std::string> names;
  const int last = static_cast<int>(Status::kStale);
  for (int i = 0; i <= last; ++i) {
    const std::string name = status_name(static_cast<Status>(i));
    EXPECT_NE(name, "unknown") << i;
    EXPECT_FALSE(name.empty()) << i;
    EXPECT_TRUE(names.insert(name).second) << "two statuses named " << name;
  }
  EXPECT_STREQ(status_name(static_cast<Status>(last + 1)), "unknown");
}

TEST(Status, NamesTheUsersSee) {
  EXPECT_STREQ(status_name(Status::kOk), "ok");
  EXPECT_STREQ(status_name(Status::kIoError), "io error");
  EXPECT_STREQ(status_name(Status::kBadFormat), "bad format");
  EXPECT_STREQ(status_name(Status::kCorrupt), "corrupt");
  EXPECT_STREQ(status_name(Status::kOtherMachine), "another machine");
  EXPECT_STREQ(status_name(Status::kOtherBudget), "another CPU budget");
}

}  // namespace
}  // namespace pw
