// machine_load on synthetic, XML and sysfs topologies, and on this machine.
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/unit/topology/test_util.h"
#include "topology/internal.h"

namespace pw::topo {
namespace {

using test::CoreList;
using test::cores_of;
using test::fixture;

size_t pu_count(const Machine& m) {
  size_t n = 0;
  for (const Socket& s : m.sockets) {
    for (const Core& c : s.cores) n += c.pus.size();
  }
  return n;
}

TEST(MachineHwloc, OneSocketTwoCoresSynthetic) {
  Machine m = test::load("synthetic:package:1 core:2 pu:1");
  EXPECT_EQ(m.source, "synthetic:package:1 core:2 pu:1");
  ASSERT_EQ(m.sockets.size(), 1u);
  EXPECT_EQ(cores_of(m), (CoreList{{0}, {1}}));
}

// A description larger than any Linux machine (16x64x64 = 65536 PUs) is
// refused before hwloc builds it (it took 8 s and 750 MB); its neighbours
// still load.
TEST(MachineHwloc, SyntheticLargerThanAnyMachineIsRefused) {
  Machine m;
  std::string err;
  EXPECT_EQ(machine_load("synthetic:package:16 core:64 pu:64", &m, &err), Status::kInvalid);
  EXPECT_NE(err.find("more than 8192 PUs"), std::string::npos) << err;
  EXPECT_EQ(machine_load("synthetic:package:1 core:99999999999999999999 pu:1", &m, &err),
            Status::kInvalid);
  EXPECT_EQ(pu_count(test::load("synthetic:package:2 core:8 pu:2")), 32u);
}

TEST(MachineHwloc, OneSocketTwoCoresXml) {
  std::string path = fixture("topology/1s2c.xml");
  Machine m = test::load(path);
  EXPECT_EQ(m.source, "xml:" + path);
  EXPECT_EQ(cores_of(m), (CoreList{{0}, {1}}));
}

TEST(MachineHwloc, TwoSocketsSmtSyntheticSiblingsAdjacent) {
  Machine m = test::load("synthetic:package:2 core:24 pu:2");
  ASSERT_EQ(m.sockets.size(), 2u);
  ASSERT_EQ(m.sockets[0].cores.size(), 24u);
  ASSERT_EQ(m.sockets[1].cores.size(), 24u);
  EXPECT_EQ(pu_count(m), 96u);
  EXPECT_EQ(m.sockets[0].cores[0].pus, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.sockets[0].cores[23].pus, (std::vector<int>{46, 47}));
  EXPECT_EQ(m.sockets[1].cores[0].pus, (std::vector<int>{48, 49}));
  EXPECT_EQ(m.sockets[1].os_index, 1);
  EXPECT_EQ(m.sockets[1].cores[5].socket, 1);
}

// The XML fixture numbers PUs the way Intel servers do: sibling of PU n is n + 48.
TEST(MachineHwloc, TwoSocketsSmtXmlSiblingsApart) {
  Machine m = test::load(fixture("topology/2s24c2t.xml"));
  ASSERT_EQ(m.sockets.size(), 2u);
  EXPECT_EQ(pu_count(m), 96u);
  EXPECT_EQ(m.sockets[0].cores[0].pus, (std::vector<int>{0, 48}));
  EXPECT_EQ(m.sockets[0].cores[23].pus, (std::vector<int>{23, 71}));
  EXPECT_EQ(m.sockets[1].cores[0].pus, (std::vector<int>{24, 72}));
  EXPECT_EQ(m.sockets[1].cores[23].pus, (std::vector<int>{47, 95}));
}

TEST(MachineHwloc, FourSocketsXmlAndSyntheticAgree) {
  Machine x = test::load(fixture("topology/4s8c.xml"));
  Machine s = test::load("synthetic:package:4 core:8 pu:1");
  ASSERT_EQ(x.sockets.size(), 4u);
  EXPECT_EQ(cores_of(x), cores_of(s));
  EXPECT_EQ(x.sockets[2].cores[0].pus, (std::vector<int>{16}));
  EXPECT_EQ(x.sockets[3].os_index, 3);
}

TEST(MachineHwloc, NoPackageIsOneSocket) {
  Machine m = test::load("synthetic:core:4 pu:2");
  ASSERT_EQ(m.sockets.size(), 1u) << m.source;
  EXPECT_EQ(cores_of(m), (CoreList{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(MachineHwloc, NoCoreMakesEachPuACore) {
  Machine m = test::load("synthetic:pu:3");
  ASSERT_EQ(m.sockets.size(), 1u) << m.source;
  EXPECT_EQ(cores_of(m), (CoreList{{0}, {1}, {2}}));
  Machine p = test::load("synthetic:package:2 pu:2");
  ASSERT_EQ(p.sockets.size(), 2u) << p.source;
  EXPECT_EQ(cores_of(p), (CoreList{{0}, {1}, {2}, {3}}));
}

TEST(MachineHwloc, BadSyntheticIsInvalid) {
  Machine m;
  std::string err;
  EXPECT_EQ(machine_load("synthetic:package:x core:2", &m, &err), Status::kInvalid);
  EXPECT_NE(err.find("synthetic"), std::string::npos) << err;
}

TEST(MachineHwloc, BrokenXmlIsInvalid) {
  for (const char* name : {"topology/broken.xml", "topology/garbage.xml"}) {
    Machine m;
    std::string err;
    EXPECT_EQ(machine_load(fixture(name), &m, &err), Status::kInvalid) << name;
    EXPECT_NE(err.find(name), std::string::npos) << err;
    EXPECT_TRUE(m.sockets.empty());
  }
}

TEST(MachineHwloc, MissingXmlIsIoError) {
  Machine m;
  std::string err;
  EXPECT_EQ(machine_load(fixture("topology/no-such.xml"), &m, &err), Status::kIoError);
  EXPECT_NE(err.find("no-such.xml"), std::string::npos) << err;
}

TEST(MachineHwloc, UnreadableXmlIsIoError) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads any file";
  std::string path = testing::TempDir() + "/pw_unreadable.xml";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  chmod(path.c_str(), 0);
  Machine m;
  std::string err;
  EXPECT_EQ(machine_load(path, &m, &err), Status::kIoError);
  EXPECT_FALSE(err.empty());
  unlink(path.c_str());
}

TEST(MachineHwloc, DirectoryAsXmlIsIoError) {
  Machine m;
  std::string err;
  EXPECT_EQ(machine_load(fixture("topology"), &m, &err), Status::kIoError);
  EXPECT_FALSE(err.empty());
}

TEST(MachineHwloc, ThisMachineHasEveryOnlineCpu) {
  Machine m;
  std::string err;
  ASSERT_EQ(machine_load("", &m, &err), Status::kOk) << err;
  EXPECT_EQ(pu_count(m), static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_TRUE(m.source == "hwloc" || m.source == "sysfs") << m.source;
}

// hwloc must not see the process's own affinity: the budget applies it, with a note.
TEST(MachineHwloc, ThisMachineIgnoresAffinity) {
  if (!internal::hwloc_available()) GTEST_SKIP() << "no libhwloc";
  cpu_set_t old, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  Machine m;
  std::string err;
  Status st = internal::hwloc_load("", &m, &err);
  sched_setaffinity(0, sizeof old, &old);
  ASSERT_EQ(st, Status::kOk) << err;
  EXPECT_EQ(pu_count(m), static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN)));
}

TEST(MachineHwloc, SysfsAndHwlocAgreeHere) {
  if (!internal::hwloc_available()) GTEST_SKIP() << "no libhwloc";
  Machine h, s;
  std::string err;
  ASSERT_EQ(internal::hwloc_load("", &h, &err), Status::kOk) << err;
  ASSERT_EQ(internal::sysfs_load("/sys/devices/system/cpu", &s, &err), Status::kOk) << err;
  EXPECT_EQ(cores_of(h), cores_of(s));
}

// RTLD_LOCAL: loading hwloc must not make its symbols visible to the host.
TEST(MachineHwloc, HwlocStaysOutOfTheGlobalScope) {
  test::load("synthetic:package:1 core:2 pu:1");
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "hwloc_topology_init"), nullptr);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "hwloc_get_api_version"), nullptr);
}

TEST(MachineSysfs, TwoSocketsSmtFixture) {
  Machine m;
  std::string err;
  ASSERT_EQ(internal::sysfs_load(fixture("topology/sysfs-2s2c2t"), &m, &err), Status::kOk) << err;
  EXPECT_EQ(m.source, "sysfs");
  ASSERT_EQ(m.sockets.size(), 2u);
  // cpu8 has a topology directory but is not online.
  EXPECT_EQ(cores_of(m), (CoreList{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(m.sockets[1].os_index, 1);
  EXPECT_EQ(m.sockets[1].cores[0].socket, 1);
}

TEST(MachineSysfs, NoTopologyDirectoriesIsOneSocketOfSingleCores) {
  Machine m;
  std::string err;
  ASSERT_EQ(internal::sysfs_load(fixture("topology/sysfs-notopo"), &m, &err), Status::kOk) << err;
  ASSERT_EQ(m.sockets.size(), 1u);
  EXPECT_EQ(cores_of(m), (CoreList{{0}, {1}, {2}}));
}

TEST(MachineSysfs, GarbageIsInvalid) {
  Machine m;
  std::string err;
  EXPECT_EQ(internal::sysfs_load(fixture("topology/sysfs-garbage"), &m, &err), Status::kInvalid);
  EXPECT_NE(err.find("physical_package_id"), std::string::npos) << err;
}

TEST(MachineSysfs, MissingRootIsUnsupported) {
  Machine m;
  std::string err;
  EXPECT_EQ(internal::sysfs_load(fixture("topology/nowhere"), &m, &err), Status::kUnsupported);
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace pw::topo
