// cpulist_parse / cpulist_format: the format of sysfs, cgroup files and PARWIDTH_CPUS.
#include <sys/resource.h>
#include <unistd.h>

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
  EXPECT_STREQ(status_name(Status::kIoError), "io error");
}

// A 2 KB value of overlapping whole-range entries (issue 14, item 11) costs
// its unique CPUs only: under a 256 MiB address-space limit it still parses,
// where expanding every range first needed about 1 GB.
// Exits 0 if the whole range list parses within 256 MiB of address space.
void parse_in_256_mib(const std::string& text) {
  struct rlimit lim;
  lim.rlim_cur = lim.rlim_max = 256u << 20;
  setrlimit(RLIMIT_AS, &lim);
  std::vector<int> v;
  std::string err;
  const bool ok = cpulist_parse(text, &v, &err) == Status::kOk && v.size() == 1048577 &&
                  v.front() == 0 && v.back() == 1048576;
  _exit(ok ? 0 : 1);
}

TEST(Cpulist, OverlappingRangesCostTheirUniqueCpus) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer reserves terabytes of shadow: no address-space limit "
                  "can be set; the Release run checks this";
#endif
  std::string text = "0-1048576";
  while (text.size() < 2048) text += ",0-1048576";
  EXPECT_EXIT(parse_in_256_mib(text), testing::ExitedWithCode(0), "");
}

TEST(Cpulist, MergedRangesKeepEveryCpuOnce) {
  std::vector<int> v;
  std::string err;
  ASSERT_EQ(cpulist_parse("5-9,0-3,2-6,12,12,11-12", &v, &err), Status::kOk);
  EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12}));
}

}  // namespace
}  // namespace pw::topo
