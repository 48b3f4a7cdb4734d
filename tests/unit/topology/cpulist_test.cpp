// cpulist_parse / cpulist_format: the format of sysfs, cgroup files and PARWIDTH_CPUS.
#include <gtest/gtest.h>

#include "topology/topology.h"

namespace pw::topo {
namespace {

std::vector<int> parse_ok(const std::string& text) {
  std::vector<int> v{-1};
  std::string err;
  EXPECT_EQ(cpulist_parse(text, &v, &err), Status::kOk) << text << ": " << err;
  return v;
}

TEST(Cpulist, ParsesRangesAndSingles) {
  EXPECT_EQ(parse_ok("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_ok("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_ok("0-0"), (std::vector<int>{0}));
}

TEST(Cpulist, ToleratesWhitespaceAndNewlines) {
  EXPECT_EQ(parse_ok(" 0-1 , 4\n"), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(parse_ok("0 - 2\n"), (std::vector<int>{0, 1, 2}));
}

TEST(Cpulist, EmptyIsAnEmptyList) {
  EXPECT_TRUE(parse_ok("").empty());
  EXPECT_TRUE(parse_ok("\n").empty());
}

TEST(Cpulist, SortsAndDeduplicates) {
  EXPECT_EQ(parse_ok("3,1,1-2"), (std::vector<int>{1, 2, 3}));
}

TEST(Cpulist, RejectsGarbage) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1,", ",1", "2000000", "1-2-3", "0x1",
                          "1 2", "0-9999999"}) {
    std::vector<int> v{42};
    std::string err;
    EXPECT_EQ(cpulist_parse(bad, &v, &err), Status::kInvalid) << bad;
    EXPECT_FALSE(err.empty()) << bad;
    EXPECT_EQ(v, (std::vector<int>{42})) << "out touched on failure: " << bad;
  }
}

TEST(Cpulist, Formats) {
  EXPECT_EQ(cpulist_format({}), "");
  EXPECT_EQ(cpulist_format({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpulist_format({5}), "5");
  EXPECT_EQ(cpulist_format({3, 1, 2, 2, 7}), "1-3,7");
}

TEST(Cpulist, RoundTrips) {
  for (const char* s : {"0", "0-95", "0-7,48-55", "1,3,5-6,100"}) {
    EXPECT_EQ(cpulist_format(parse_ok(s)), s);
  }
}

TEST(Status, Names) {
  EXPECT_STREQ(status_name(Status::kOk), "ok");
  EXPECT_STREQ(status_name(Status::kUnsupported), "unsupported");
  EXPECT_STREQ(status_name(Status::kInvalid), "invalid");
  EXPECT_STREQ(status_name(Status::kIoError), "io-error");
}

}  // namespace
}  // namespace pw::topo
