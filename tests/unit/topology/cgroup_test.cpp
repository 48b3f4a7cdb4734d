// cgroup v2 discovery and limits, on fixture directories and on this process.
#include <gtest/gtest.h>

#include "tests/unit/topology/test_util.h"
#include "topology/internal.h"

namespace pw::topo {
namespace {

using test::fixture;
using test::range;

CgroupLimits read_ok(const std::string& rel) {
  CgroupLimits lim;
  std::string err;
  EXPECT_EQ(cgroup_read(fixture("cgroup/" + rel), &lim, &err), Status::kOk) << rel << ": " << err;
  return lim;
}

Status read_status(const std::string& rel, std::string* err) {
  CgroupLimits lim;
  lim.quota_cpus = 42;
  Status st = cgroup_read(fixture("cgroup/" + rel), &lim, err);
  if (st != Status::kOk) {
    EXPECT_EQ(lim.quota_cpus, 42) << "out touched on failure";
  }
  return st;
}

TEST(CgroupRead, MaxIsNoQuota) {
  CgroupLimits lim = read_ok("max");
  EXPECT_EQ(lim.quota_cpus, 0);
  EXPECT_TRUE(lim.quota_from.empty());
  EXPECT_TRUE(lim.have_cpuset);
  EXPECT_EQ(lim.cpuset, (std::vector<int>{0, 1}));
  EXPECT_EQ(lim.cpuset_from, fixture("cgroup/max/cpuset.cpus.effective"));
}

TEST(CgroupRead, MaxWithoutPeriodIsNoQuota) {
  CgroupLimits lim = read_ok("maxonly");
  EXPECT_EQ(lim.quota_cpus, 0);
  EXPECT_FALSE(lim.have_cpuset);  // no cpuset.cpus.effective: no cpuset restriction
}

TEST(CgroupRead, OneAndAHalfCpus) {
  CgroupLimits lim = read_ok("quota15/leaf");
  EXPECT_DOUBLE_EQ(lim.quota_cpus, 1.5);
  EXPECT_EQ(lim.quota_from, fixture("cgroup/quota15/leaf/cpu.max"));
  std::vector<int> want = range(0, 7);
  for (int i = 48; i <= 55; ++i) want.push_back(i);
  EXPECT_EQ(lim.cpuset, want);
}

TEST(CgroupRead, HalfACpuAndAnEmptyCpusetMeansNoCpuset) {
  CgroupLimits lim = read_ok("quota05/leaf");
  EXPECT_DOUBLE_EQ(lim.quota_cpus, 0.5);
  EXPECT_FALSE(lim.have_cpuset);
  EXPECT_TRUE(lim.cpuset.empty());
}

TEST(CgroupRead, LowestQuotaOnTheWayUpWins) {
  // leaf 4 cpus, parent 2 cpus, grandparent max.
  CgroupLimits lim = read_ok("nested/parent/leaf");
  EXPECT_DOUBLE_EQ(lim.quota_cpus, 2.0);
  EXPECT_EQ(lim.quota_from, fixture("cgroup/nested/parent/cpu.max"));
  EXPECT_EQ(lim.cpuset, range(8, 15));
}

TEST(CgroupRead, StopsWhereTheCgroupFileSystemEnds) {
  // outside/cpu.max is garbage but outside/ has no cgroup.controllers: never read.
  CgroupLimits lim = read_ok("outside/root/leaf");
  EXPECT_DOUBLE_EQ(lim.quota_cpus, 3.0);
}

TEST(CgroupRead, MissingFilesAreNoLimits) {
  CgroupLimits lim = read_ok("missing/leaf");
  EXPECT_FALSE(lim.have_cpuset);
  EXPECT_EQ(lim.quota_cpus, 0);
}

TEST(CgroupRead, MissingDirectoryIsUnsupported) {
  std::string err;
  EXPECT_EQ(read_status("no-such-cgroup", &err), Status::kUnsupported);
  EXPECT_NE(err.find("no-such-cgroup"), std::string::npos) << err;
}

TEST(CgroupRead, GarbageCpuMaxIsInvalid) {
  for (const char* rel : {"garbage/leaf", "garbage-period"}) {
    std::string err;
    EXPECT_EQ(read_status(rel, &err), Status::kInvalid) << rel;
    EXPECT_NE(err.find(std::string(rel) + "/cpu.max"), std::string::npos) << err;
  }
}

TEST(CgroupRead, GarbageCpusetIsInvalid) {
  std::string err;
  EXPECT_EQ(read_status("garbage-cpuset", &err), Status::kInvalid);
  EXPECT_NE(err.find("cpuset.cpus.effective"), std::string::npos) << err;
}

TEST(CpuMax, Parses) {
  struct Case {
    const char* text;
    double cpus;
  } cases[] = {{"max 100000\n", 0},   {"max", 0},           {"150000 100000\n", 1.5},
               {"50000 100000", 0.5}, {"200000 100000", 2}, {"  25000   50000 ", 0.5}};
  for (const Case& c : cases) {
    double cpus = -1;
    std::string err;
    EXPECT_EQ(internal::cpu_max_parse(c.text, &cpus, &err), Status::kOk) << c.text << err;
    EXPECT_DOUBLE_EQ(cpus, c.cpus) << c.text;
  }
}

TEST(CpuMax, RejectsGarbage) {
  for (const char* bad : {"", "garbage", "100000", "-5 100000", "150000 0", "1 2 3", "max 0",
                          "max -1", "1.5 100000", "max100000"}) {
    double cpus = -1;
    std::string err;
    EXPECT_EQ(internal::cpu_max_parse(bad, &cpus, &err), Status::kInvalid) << bad;
    EXPECT_FALSE(err.empty());
  }
}

const char kMountinfo[] =
    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(CgroupDir, JoinsMountAndPath) {
  std::string dir, err;
  ASSERT_EQ(internal::cgroup_dir_from("0::/user.slice/job.scope\n", kMountinfo, &dir, &err),
            Status::kOk)
      << err;
  EXPECT_EQ(dir, "/sys/fs/cgroup/user.slice/job.scope");
  ASSERT_EQ(internal::cgroup_dir_from("0::/\n", kMountinfo, &dir, &err), Status::kOk);
  EXPECT_EQ(dir, "/sys/fs/cgroup");
}

TEST(CgroupDir, HybridHierarchyUsesTheV2Line) {
  std::string dir, err;
  std::string cg = "12:cpuset:/job\n11:cpu,cpuacct:/job\n0::/job\n";
  std::string mi =
      "40 30 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
      "41 30 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  ASSERT_EQ(internal::cgroup_dir_from(cg, mi, &dir, &err), Status::kOk) << err;
  EXPECT_EQ(dir, "/sys/fs/cgroup/unified/job");
}

TEST(CgroupDir, SubtreeMountStripsItsRoot) {
  std::string dir, err;
  std::string mi = "30 22 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  ASSERT_EQ(internal::cgroup_dir_from("0::/docker/abc/worker\n", mi, &dir, &err), Status::kOk);
  EXPECT_EQ(dir, "/sys/fs/cgroup/worker");
}

TEST(CgroupDir, EscapedMountPoint) {
  std::string dir, err;
  std::string mi = "30 22 0:26 / /mnt/my\\040cgroups rw - cgroup2 none rw\n";
  ASSERT_EQ(internal::cgroup_dir_from("0::/a\n", mi, &dir, &err), Status::kOk);
  EXPECT_EQ(dir, "/mnt/my cgroups/a");
}

TEST(CgroupDir, V1OnlyHasNoV2Dir) {
  std::string dir = "untouched", err;
  std::string mi = "40 30 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n";
  EXPECT_EQ(internal::cgroup_dir_from("12:cpuset:/job\n", mi, &dir, &err), Status::kUnsupported);
  EXPECT_EQ(dir, "untouched");
  EXPECT_NE(err.find("no cgroup v2 hierarchy"), std::string::npos) << err;
}

TEST(CgroupDir, NoCgroup2MountIsUnsupported) {
  std::string dir, err;
  EXPECT_EQ(
      internal::cgroup_dir_from("0::/job\n", "22 1 0:21 / /proc rw - proc proc rw\n", &dir, &err),
      Status::kUnsupported);
  EXPECT_FALSE(err.empty());
}

// Whatever this machine is, the answer is a usable directory or a clean kUnsupported.
TEST(CgroupSelf, ThisProcess) {
  std::string dir, err;
  Status st = cgroup_self_dir(&dir, &err);
  if (st == Status::kUnsupported) GTEST_SKIP() << err;
  ASSERT_EQ(st, Status::kOk) << err;
  CgroupLimits lim;
  st = cgroup_read(dir, &lim, &err);
  EXPECT_TRUE(st == Status::kOk || st == Status::kUnsupported) << status_name(st) << ": " << err;
}

}  // namespace
}  // namespace pw::topo
