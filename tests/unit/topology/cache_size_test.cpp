// l2_cache_per_core on sysfs trees written here (a core's own L2, SMT siblings, a cluster's
// shared L2, malformed sizes, none listed) and on this machine's sysfs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "topology/topology.h"

namespace pw::topo {
namespace {

class SysfsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/pw_l2_XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    root = t;
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + root + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  // Writes root/rel, making its directories.
  void put(const std::string& rel, const std::string& text) {
    std::string path = root;
    size_t at = 0;
    while ((at = rel.find('/', at)) != std::string::npos) {
      mkdir((root + "/" + rel.substr(0, at)).c_str(), 0700);
      ++at;
    }
    path += "/" + rel;
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr) << path;
    fputs(text.c_str(), f);
    fclose(f);
  }
  void cache(int cpu, int index, const std::string& level, const std::string& type,
             const std::string& size, const std::string& shared) {
    const std::string d = "cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index);
    put(d + "/level", level + "\n");
    put(d + "/type", type + "\n");
    put(d + "/size", size + "\n");
    put(d + "/shared_cpu_list", shared + "\n");
  }
  Status read(int cpu, int64_t* bytes, std::string* err) {
    return l2_cache_per_core(root, cpu, bytes, err);
  }
  // The bytes read for `cpu`, which must read kOk (-1 otherwise).
  int64_t read_ok(int cpu) {
    int64_t b = -1;
    std::string err;
    const Status st = read(cpu, &b, &err);
    EXPECT_EQ(st, Status::kOk) << err;
    return st == Status::kOk ? b : -1;
  }
  std::string root;
};

TEST_F(SysfsTree, ACoresOwnL2SharedOnlyWithItsSiblings) {
  put("cpu1/topology/thread_siblings_list", "1,5\n");
  cache(1, 0, "1", "Data", "48K", "1,5");
  cache(1, 1, "1", "Instruction", "32K", "1,5");
  cache(1, 2, "2", "Unified", "2048K", "1,5");
  cache(1, 3, "3", "Unified", "107520K", "0-15");
  EXPECT_EQ(read_ok(1), 2048 << 10);
}

TEST_F(SysfsTree, AClustersSharedL2CountsAsItsSharePerCore) {
  put("cpu0/topology/thread_siblings_list", "0\n");
  cache(0, 0, "1", "Data", "64K", "0");
  cache(0, 1, "2", "Unified", "4M", "0-3");
  EXPECT_EQ(read_ok(0), 1 << 20);
}

TEST_F(SysfsTree, WithoutSiblingsOrSharingTheWholeCache) {
  cache(2, 0, "2", "Unified", "524288", "");
  EXPECT_EQ(read_ok(2), 524288);
}

TEST_F(SysfsTree, AnL2InstructionCacheIsNotTheDataCache) {
  cache(0, 0, "2", "Instruction", "1M", "0");
  cache(0, 1, "2", "Data", "256K", "0");
  EXPECT_EQ(read_ok(0), 256 << 10);
}

TEST_F(SysfsTree, MalformedSizeIsInvalidAndLeavesTheResult) {
  for (const char* bad : {"", "K", "12Q", "-5K", "2048K extra", "99999999999999G"}) {
    cache(0, 0, "2", "Unified", bad, "0");
    int64_t b = 7;
    std::string err;
    EXPECT_EQ(read(0, &b, &err), Status::kInvalid) << "'" << bad << "'";
    EXPECT_EQ(b, 7);
    EXPECT_NE(err.find("size"), std::string::npos) << err;
  }
}

TEST_F(SysfsTree, NoLevelTwoCacheIsUnsupported) {
  cache(0, 0, "1", "Data", "32K", "0");
  cache(0, 1, "3", "Unified", "8M", "0-3");
  int64_t b = 7;
  std::string err;
  EXPECT_EQ(read(0, &b, &err), Status::kUnsupported);
  EXPECT_EQ(b, 7);
  EXPECT_EQ(read(9, &b, &err), Status::kUnsupported);  // no such CPU
}

TEST(L2CachePerCore, ThisMachineListsOneOrSaysWhyNot) {
  int64_t b = 0;
  std::string err;
  const Status st = l2_cache_per_core("/sys/devices/system/cpu", 0, &b, &err);
  if (st == Status::kUnsupported) GTEST_SKIP() << "this machine's sysfs: " << err;
  ASSERT_EQ(st, Status::kOk) << err;
  // Every CPU with an L2 since the 1990s has at least 64 KiB of it per core.
  EXPECT_GE(b, 64 << 10);
  EXPECT_LE(b, int64_t{1} << 32);
}

}  // namespace
}  // namespace pw::topo
