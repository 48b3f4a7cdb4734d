// budget_compute on synthetic, XML and sysfs machines with cgroup fixtures, affinity subsets,
// PARWIDTH_CPUS, SMT and local shares, against hand-computed core lists.
#include <gtest/gtest.h>

#include "tests/unit/topology/test_util.h"
#include "topology/internal.h"

namespace pw::topo {
namespace {

using test::CoreList;
using test::cores_of;
using test::fixture;
using test::range;

const char k1s2c[] = "synthetic:package:1 core:2 pu:1";
const char k2s24c2t[] = "synthetic:package:2 core:24 pu:2";  // siblings 2n, 2n+1
const char k4s8c[] = "synthetic:package:4 core:8 pu:1";

BudgetInputs plain() {
  BudgetInputs in;
  in.use_affinity = false;
  in.use_cgroup = false;
  return in;
}

BudgetInputs with_cgroup(const std::string& rel) {
  BudgetInputs in = plain();
  in.use_cgroup = true;
  std::string err;
  EXPECT_EQ(cgroup_read(fixture("cgroup/" + rel), &in.cgroup, &err), Status::kOk) << err;
  return in;
}

Budget ok(const Machine& m, const BudgetInputs& in) {
  EXPECT_FALSE(m.sockets.empty()) << m.source;
  Budget b;
  std::string err;
  EXPECT_EQ(budget_compute(m, in, &b, &err), Status::kOk) << err;
  return b;
}

// The whole of each core, cores [lo, hi] of a machine with one PU per core.
CoreList singles(int lo, int hi) {
  CoreList r;
  for (int i = lo; i <= hi; ++i) r.push_back({i});
  return r;
}

TEST(Budget, WholeMachineWithoutLimits) {
  Machine m = test::load(fixture("topology/2s24c2t.xml"));
  Budget b = ok(m, plain());
  EXPECT_EQ(b.cores, 48);
  EXPECT_EQ(b.cpus, range(0, 95));
  ASSERT_EQ(b.sockets.size(), 2u);
  EXPECT_EQ(b.sockets[0].cores[0].pus, (std::vector<int>{0, 48}));
  EXPECT_EQ(b.sockets[1].cores[0].pus, (std::vector<int>{24, 72}));
  EXPECT_EQ(b.sockets[1].cores[0].socket, 1);
  EXPECT_EQ(b.quota_cpus, 0);
  EXPECT_EQ(b.notes, (std::vector<std::string>{"machine: 2 sockets, 48 cores, 96 PUs (xml:" +
                                               fixture("topology/2s24c2t.xml") + ")"}));
}

TEST(Budget, OneSocketTwoCoresCgroupMax) {
  Machine m = test::load(fixture("topology/1s2c.xml"));
  BudgetInputs in = with_cgroup("max");
  in.use_affinity = true;
  in.affinity = {0, 1};
  Budget b = ok(m, in);
  EXPECT_EQ(cores_of(b), singles(0, 1));
  EXPECT_EQ(b.cores, 2);
  EXPECT_EQ(b.quota_cpus, 0);
  ASSERT_EQ(b.notes.size(), 3u);
  EXPECT_EQ(b.notes[0],
            "machine: 1 socket, 2 cores, 2 PUs (xml:" + fixture("topology/1s2c.xml") + ")");
  EXPECT_EQ(b.notes[1], "affinity: 0-1 (sched_getaffinity)");
  EXPECT_EQ(b.notes[2], "cgroup cpuset: 0-1 (" + fixture("cgroup/max/cpuset.cpus.effective") + ")");
}

TEST(Budget, OneSocketTwoCoresHalfCpuQuotaKeepsOneCore) {
  Budget b = ok(test::load(k1s2c), with_cgroup("quota05/leaf"));
  EXPECT_EQ(cores_of(b), singles(0, 0));
  EXPECT_EQ(b.cpus, (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(b.quota_cpus, 0.5);
  EXPECT_EQ(b.notes.back(),
            "cgroup quota: 0.5 cpus -> 1 core (" + fixture("cgroup/quota05/leaf/cpu.max") + ")");
}

TEST(Budget, OneSocketTwoCoresOneAndAHalfCpusKeepsBoth) {
  Budget b = ok(test::load(k1s2c), with_cgroup("quota15/leaf"));
  EXPECT_EQ(cores_of(b), singles(0, 1));
  EXPECT_DOUBLE_EQ(b.quota_cpus, 1.5);
}

TEST(Budget, CgroupCpusetAndQuotaOnTwoSocketsSmt) {
  // cpuset 0-7,48-55 = the first 8 cores with both siblings; 1.5 cpus -> 2 cores.
  std::string xml = fixture("topology/2s24c2t.xml");
  Budget b = ok(test::load(xml), with_cgroup("quota15/leaf"));
  EXPECT_EQ(cores_of(b), (CoreList{{0, 48}, {1, 49}}));
  EXPECT_EQ(b.cpus, (std::vector<int>{0, 1, 48, 49}));
  EXPECT_EQ(b.cores, 2);
  EXPECT_EQ(b.sockets.size(), 1u);
  EXPECT_EQ(
      b.notes,
      (std::vector<std::string>{
          "machine: 2 sockets, 48 cores, 96 PUs (xml:" + xml + ")",
          "cgroup cpuset: 0-7,48-55 (" + fixture("cgroup/quota15/leaf/cpuset.cpus.effective") + ")",
          "cgroup quota: 1.5 cpus -> 2 cores (" + fixture("cgroup/quota15/leaf/cpu.max") + ")"}));
}

TEST(Budget, ParentQuotaBindsAndCpusetTakesOneSibling) {
  // cpuset 8-15 has only the first sibling of cores 8..15; the parent's 2 cpus keep 2 cores.
  Budget b = ok(test::load(fixture("topology/2s24c2t.xml")), with_cgroup("nested/parent/leaf"));
  EXPECT_EQ(cores_of(b), (CoreList{{8}, {9}}));
  EXPECT_DOUBLE_EQ(b.quota_cpus, 2.0);
  EXPECT_EQ(b.notes.back(),
            "cgroup quota: 2 cpus -> 2 cores (" + fixture("cgroup/nested/parent/cpu.max") + ")");
}

TEST(Budget, QuotaFillsOneSocketFirst) {
  // 4 sockets x 8 cores, quota 2 cpus (nested) without its cpuset: cores 0 and 1 of socket 0.
  Machine m = test::load(k4s8c);
  BudgetInputs in = with_cgroup("nested/parent/leaf");
  in.cgroup.have_cpuset = false;
  Budget b = ok(m, in);
  EXPECT_EQ(cores_of(b), singles(0, 1));
  EXPECT_EQ(b.sockets.size(), 1u);
}

TEST(Budget, CgroupIgnoredWhenNotUsed) {
  Machine m = test::load(k4s8c);
  BudgetInputs in = with_cgroup("quota05/leaf");
  in.use_cgroup = false;
  Budget b = ok(m, in);
  EXPECT_EQ(b.cores, 32);
  EXPECT_EQ(b.quota_cpus, 0);
  EXPECT_EQ(b.notes.size(), 1u);
}

TEST(Budget, AffinityOfOneSiblingPerCore) {
  Machine m = test::load(k2s24c2t);
  BudgetInputs in = plain();
  in.use_affinity = true;
  for (int i = 0; i < 96; i += 2) in.affinity.push_back(i);
  Budget b = ok(m, in);
  EXPECT_EQ(b.cores, 48);
  EXPECT_EQ(b.cpus, in.affinity);
  EXPECT_EQ(b.sockets[0].cores[3].pus, (std::vector<int>{6}));
  EXPECT_EQ(b.sockets[1].cores[0].pus, (std::vector<int>{48}));
}

TEST(Budget, AffinitySubsetOfOneSocket) {
  Machine m = test::load(k4s8c);
  BudgetInputs in = plain();
  in.use_affinity = true;
  in.affinity = {9, 10, 11};
  Budget b = ok(m, in);
  EXPECT_EQ(cores_of(b), singles(9, 11));
  ASSERT_EQ(b.sockets.size(), 1u);
  EXPECT_EQ(b.sockets[0].os_index, 1);
  EXPECT_EQ(b.sockets[0].cores[0].socket, 0);  // index into Budget::sockets
  EXPECT_EQ(b.notes[1], "affinity: 9-11 (sched_getaffinity)");
}

TEST(Budget, SmtOffStillListsSiblings) {
  Machine m = test::load(k2s24c2t);
  BudgetInputs in = plain();
  in.restrict_cpus = {0, 1, 2, 3};
  for (bool smt : {false, true}) {
    in.smt = smt;
    Budget b = ok(m, in);
    EXPECT_EQ(cores_of(b), (CoreList{{0, 1}, {2, 3}})) << "smt=" << smt;
    EXPECT_EQ(b.cores, 2);
    EXPECT_EQ(b.cpus, range(0, 3));
  }
}

TEST(Budget, RestrictCpusAcrossSockets) {
  // 46-49 = the last core of socket 0 and the first of socket 1.
  Machine m = test::load(k2s24c2t);
  BudgetInputs in = plain();
  in.restrict_cpus = {46, 47, 48, 49};
  Budget b = ok(m, in);
  EXPECT_EQ(cores_of(b), (CoreList{{46, 47}, {48, 49}}));
  ASSERT_EQ(b.sockets.size(), 2u);
  EXPECT_EQ(b.sockets[1].cores[0].socket, 1);
  EXPECT_EQ(b.notes.back(), "PARWIDTH_CPUS: 46-49");
}

TEST(Budget, RestrictCpusOutsideAllowedIsInvalid) {
  Machine m = test::load(k1s2c);
  BudgetInputs in = plain();
  in.restrict_cpus = {5};
  Budget b;
  b.cores = 42;
  std::string err;
  EXPECT_EQ(budget_compute(m, in, &b, &err), Status::kInvalid);
  EXPECT_NE(err.find("PARWIDTH_CPUS"), std::string::npos) << err;
  EXPECT_EQ(b.cores, 42);
}

TEST(Budget, NothingAllowedIsInvalid) {
  Machine m = test::load(k1s2c);
  for (std::vector<int> aff : {std::vector<int>{}, std::vector<int>{200}}) {
    BudgetInputs in = plain();
    in.use_affinity = true;
    in.affinity = aff;
    Budget b;
    std::string err;
    EXPECT_EQ(budget_compute(m, in, &b, &err), Status::kInvalid);
    EXPECT_FALSE(err.empty());
  }
  // A cgroup cpuset disjoint from affinity.
  BudgetInputs in = with_cgroup("nested/parent/leaf");  // cpuset 8-15
  Budget b;
  std::string err;
  EXPECT_EQ(budget_compute(m, in, &b, &err), Status::kInvalid);
  EXPECT_NE(err.find("cgroup cpuset"), std::string::npos) << err;
}

TEST(Budget, LocalShareHalvesTwoSockets) {
  Machine m = test::load(fixture("topology/2s24c2t.xml"));
  BudgetInputs in = plain();
  in.local_size = 2;
  for (int rank = 0; rank < 2; ++rank) {
    in.local_rank = rank;
    Budget b = ok(m, in);
    EXPECT_EQ(b.cores, 24);
    ASSERT_EQ(b.sockets.size(), 1u);
    EXPECT_EQ(b.sockets[0].os_index, rank);
    EXPECT_EQ(b.sockets[0].cores[0].pus, (std::vector<int>{24 * rank, 24 * rank + 48}));
    EXPECT_EQ(b.local_rank, rank);
    EXPECT_EQ(b.local_size, 2);
    EXPECT_EQ(b.notes.back(), "local share: rank " + std::to_string(rank) + " of 2 -> 24 cores");
  }
}

TEST(Budget, LocalShareOneSocketEachOnFourSockets) {
  Machine m = test::load(fixture("topology/4s8c.xml"));
  BudgetInputs in = plain();
  in.local_size = 4;
  for (int rank = 0; rank < 4; ++rank) {
    in.local_rank = rank;
    Budget b = ok(m, in);
    EXPECT_EQ(cores_of(b), singles(8 * rank, 8 * rank + 7)) << rank;
  }
}

TEST(Budget, LocalShareUnevenIsBalancedAndContiguous) {
  // 32 cores in 3: 11, 11, 10. Rank 1 spans sockets 1 and 2.
  Machine m = test::load(k4s8c);
  BudgetInputs in = plain();
  in.local_size = 3;
  in.local_rank = 0;
  EXPECT_EQ(cores_of(ok(m, in)), singles(0, 10));
  in.local_rank = 1;
  Budget b1 = ok(m, in);
  EXPECT_EQ(cores_of(b1), singles(11, 21));
  ASSERT_EQ(b1.sockets.size(), 2u);
  EXPECT_EQ(b1.sockets[0].os_index, 1);
  EXPECT_EQ(b1.sockets[1].os_index, 2);
  EXPECT_EQ(b1.sockets[1].cores[0].socket, 1);
  in.local_rank = 2;
  EXPECT_EQ(cores_of(ok(m, in)), singles(22, 31));
}

TEST(Budget, MoreRanksThanCoresShareRoundRobin) {
  Machine m = test::load(k1s2c);
  BudgetInputs in = plain();
  in.local_size = 3;
  const int want[] = {0, 1, 0};
  for (int rank = 0; rank < 3; ++rank) {
    in.local_rank = rank;
    Budget b = ok(m, in);
    EXPECT_EQ(cores_of(b), singles(want[rank], want[rank])) << rank;
    EXPECT_EQ(b.notes.back(), "local share: rank " + std::to_string(rank) + " of 3 -> 1 core");
  }
}

TEST(Budget, QuotaThenLocalShare) {
  // Quota 2 cpus on 4x8 -> cores 0,1; two ranks get one each.
  Machine m = test::load(k4s8c);
  BudgetInputs in = with_cgroup("nested/parent/leaf");
  in.cgroup.have_cpuset = false;
  in.local_size = 2;
  in.local_rank = 1;
  EXPECT_EQ(cores_of(ok(m, in)), singles(1, 1));
}

TEST(Budget, BadLocalRankIsInvalid) {
  Machine m = test::load(k1s2c);
  for (int rank : {-1, 2}) {
    BudgetInputs in = plain();
    in.local_size = 2;
    in.local_rank = rank;
    Budget b;
    std::string err;
    EXPECT_EQ(budget_compute(m, in, &b, &err), Status::kInvalid) << rank;
    EXPECT_FALSE(err.empty());
  }
}

TEST(Budget, SysfsMachineSplitsBySocket) {
  Machine m;
  std::string err;
  ASSERT_EQ(internal::sysfs_load(fixture("topology/sysfs-2s2c2t"), &m, &err), Status::kOk) << err;
  BudgetInputs in = plain();
  in.local_size = 2;
  in.local_rank = 0;
  EXPECT_EQ(cores_of(ok(m, in)), (CoreList{{0, 4}, {1, 5}}));
  in.local_rank = 1;
  EXPECT_EQ(cores_of(ok(m, in)), (CoreList{{2, 6}, {3, 7}}));
}

// End to end on this machine, the way the preload will call it.
TEST(Budget, ThisProcess) {
  Machine m;
  std::string err;
  ASSERT_EQ(machine_load("", &m, &err), Status::kOk) << err;
  BudgetInputs in;
  ASSERT_EQ(affinity_read(&in.affinity, &err), Status::kOk) << err;
  in.use_cgroup = cgroup_self_limits(&in.cgroup, &err) == Status::kOk;
  Budget b = ok(m, in);
  EXPECT_GE(b.cores, 1);
  for (int cpu : b.cpus) {
    EXPECT_NE(std::find(in.affinity.begin(), in.affinity.end(), cpu), in.affinity.end()) << cpu;
  }
}

}  // namespace
}  // namespace pw::topo
