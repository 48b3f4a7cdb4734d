// cgroup v1's cpu quota on fixture directories, and the merged view of this process.
#include <gtest/gtest.h>

#include "tests/unit/topology/test_util.h"
#include "topology/internal.h"

namespace pw::topo {
namespace {

using test::fixture;

const char kHybridCgroup[] = "4:memory:/job\n3:cpuset:/\n2:cpu,cpuacct:/docker/job\n0::/\n";
const char kHybridMountinfo[] =
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

TEST(CgroupV1, FindsTheCpuControllerNotCpuset) {
  std::string dir, mount, err;
  ASSERT_EQ(internal::cgroup_v1_cpu_dir_from(kHybridCgroup, kHybridMountinfo, &dir, &mount, &err),
            Status::kOk)
      << err;
  EXPECT_EQ(dir, "/sys/fs/cgroup/cpu,cpuacct/docker/job");
  EXPECT_EQ(mount, "/sys/fs/cgroup/cpu,cpuacct");
}

TEST(CgroupV1, NoCpuControllerIsUnsupported) {
  std::string dir, mount, err;
  EXPECT_EQ(internal::cgroup_v1_cpu_dir_from("0::/\n", kHybridMountinfo, &dir, &mount, &err),
            Status::kUnsupported);
  EXPECT_FALSE(err.empty());
}

TEST(CgroupV1, LowestQuotaUpToTheMount) {
  // job: -1, docker: 1.5 cpus, root: -1.
  CgroupLimits lim;
  std::string err;
  ASSERT_EQ(internal::cgroup_v1_quota_read(fixture("cgroup/v1/cpu/docker/job"),
                                           fixture("cgroup/v1/cpu"), &lim, &err),
            Status::kOk)
      << err;
  EXPECT_DOUBLE_EQ(lim.quota_cpus, 1.5);
  EXPECT_EQ(lim.quota_from, fixture("cgroup/v1/cpu/docker/cpu.cfs_quota_us"));
}

TEST(CgroupV1, KeepsALowerV2Quota) {
  CgroupLimits lim;
  lim.quota_cpus = 0.5;
  lim.quota_from = "v2";
  std::string err;
  ASSERT_EQ(internal::cgroup_v1_quota_read(fixture("cgroup/v1/cpu/docker/job"),
                                           fixture("cgroup/v1/cpu"), &lim, &err),
            Status::kOk);
  EXPECT_DOUBLE_EQ(lim.quota_cpus, 0.5);
  EXPECT_EQ(lim.quota_from, "v2");
}

TEST(CgroupV1, GarbageQuotaIsInvalid) {
  CgroupLimits lim;
  std::string err;
  EXPECT_EQ(internal::cgroup_v1_quota_read(fixture("cgroup/v1-garbage/cpu/job"),
                                           fixture("cgroup/v1-garbage/cpu"), &lim, &err),
            Status::kInvalid);
  EXPECT_NE(err.find("cpu.cfs_quota_us"), std::string::npos) << err;
}

TEST(CgroupSelfLimits, ThisProcess) {
  CgroupLimits lim;
  std::string err;
  Status st = cgroup_self_limits(&lim, &err);
  if (st == Status::kUnsupported) GTEST_SKIP() << err;
  ASSERT_EQ(st, Status::kOk) << err;
  EXPECT_GE(lim.quota_cpus, 0);
  if (lim.quota_cpus > 0) {
    EXPECT_FALSE(lim.quota_from.empty());
  }
}

}  // namespace
}  // namespace pw::topo
