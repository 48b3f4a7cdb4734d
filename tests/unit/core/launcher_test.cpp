// core/planning: local ranks from launchers (Slurm's step lists, bound ranks) and
// socket-aware local shares, planned for synthetic machines.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/planning.h"

namespace pw::planning {
namespace {

struct Env {
  std::map<std::string, std::string> vars;
  opt::EnvLookup lookup() const {
    return [this](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

void share(const Env& e, int* rank, int* size, std::string* from) {
  opt::Options o;
  local_share(o, e.lookup(), rank, size, from);
}

TEST(SlurmList, Expands) {
  int n = 0;
  EXPECT_TRUE(slurm_tasks_on_node("4", 0, &n));
  EXPECT_EQ(n, 4);
  EXPECT_TRUE(slurm_tasks_on_node("2(x3),1", 2, &n));
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(slurm_tasks_on_node("2(x3),1", 3, &n));
  EXPECT_EQ(n, 1);
  EXPECT_FALSE(slurm_tasks_on_node("2(x3),1", 4, &n));
  EXPECT_TRUE(slurm_tasks_on_node("1,3(x2)", 2, &n));
  EXPECT_EQ(n, 3);
  for (const char* bad : {"", "x", "2(x", "2(x0)", "2(3)", "2;1"})
    EXPECT_FALSE(slurm_tasks_on_node(bad, 0, &n)) << bad;
}

TEST(LocalShare, SlurmStepTasksOnThisNode) {
  Env e;
  e.vars = {{"SLURM_LOCALID", "1"},
            {"SLURM_NODEID", "3"},
            {"SLURM_STEP_TASKS_PER_NODE", "4(x3),2"},
            {"SLURM_TASKS_PER_NODE", "8(x4)"},
            {"SLURM_NTASKS_PER_NODE", "8"}};
  int r, s;
  std::string from;
  share(e, &r, &s, &from);
  EXPECT_EQ(r, 1);
  EXPECT_EQ(s, 2);  // the step's count on node 3, not the job's 8
  EXPECT_NE(from.find("SLURM_STEP_TASKS_PER_NODE"), std::string::npos) << from;
  e.vars.erase("SLURM_STEP_TASKS_PER_NODE");
  share(e, &r, &s, &from);
  EXPECT_EQ(s, 8);
  e.vars.erase("SLURM_NODEID");
  e.vars.erase("SLURM_TASKS_PER_NODE");
  e.vars["SLURM_NTASKS_PER_NODE"] = "3";
  share(e, &r, &s, &from);
  EXPECT_EQ(s, 3);
  EXPECT_EQ(from, "Slurm (SLURM_LOCALID/SLURM_NTASKS_PER_NODE)");
}

TEST(LocalShare, BoundRanksKeepTheirAffinityAndUseTheRegistry) {
  Env e;
  e.vars = {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
            {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
            {"OMPI_MCA_orte_bound_at_launch", "1"}};
  int r, s;
  std::string from;
  share(e, &r, &s, &from);
  EXPECT_EQ(s, 1);
  EXPECT_EQ(from.rfind(kBoundPrefix, 0), 0u) << from;
  e.vars.erase("OMPI_MCA_orte_bound_at_launch");
  share(e, &r, &s, &from);
  EXPECT_EQ(r, 1);
  EXPECT_EQ(s, 2);
  EXPECT_EQ(from, "Open MPI (OMPI_COMM_WORLD_LOCAL_RANK/OMPI_COMM_WORLD_LOCAL_SIZE)");

  Env slurm;
  slurm.vars = {{"SLURM_LOCALID", "0"},
                {"SLURM_NODEID", "0"},
                {"SLURM_STEP_TASKS_PER_NODE", "2"},
                {"SLURM_CPU_BIND_TYPE", "mask_cpu:"}};
  share(slurm, &r, &s, &from);
  EXPECT_EQ(s, 1);
  slurm.vars["SLURM_CPU_BIND_TYPE"] = "none";
  share(slurm, &r, &s, &from);
  EXPECT_EQ(s, 2);
}

TEST(LocalShare, TorchrunFirstThenExplicitOverride) {
  Env e;
  e.vars = {{"LOCAL_RANK", "1"},
            {"LOCAL_WORLD_SIZE", "2"},
            {"SLURM_LOCALID", "0"},
            {"SLURM_NTASKS_PER_NODE", "1"}};
  int r, s;
  std::string from;
  share(e, &r, &s, &from);
  EXPECT_EQ(from, "torchrun (LOCAL_RANK/LOCAL_WORLD_SIZE)");
  opt::Options o;
  o.local_rank = 0;
  o.local_size = 4;
  local_share(o, e.lookup(), &r, &s, &from);
  EXPECT_EQ(s, 4);
}

Planned plan_on(const std::string& topology, int rank, int size) {
  opt::Options o;
  o.topology = "synthetic:" + topology;
  o.local_rank = rank;
  o.local_size = size;
  Env e;
  Planned p;
  std::string err;
  EXPECT_TRUE(plan_process(o, e.lookup(), nullptr, &p, &err)) << err;
  return p;
}

TEST(LocalSharePlan, TwoRanksOnTwoSocketsGetOneSocketEach) {
  for (int rank = 0; rank < 2; ++rank) {
    Planned p = plan_on("package:2 core:8 pu:2", rank, 2);
    EXPECT_EQ(p.budget.cores, 8);
    ASSERT_EQ(p.budget.sockets.size(), 1u);
    EXPECT_EQ(p.budget.sockets[0].os_index, rank);
    EXPECT_EQ(p.plan.threads, 8);
    EXPECT_EQ(p.plan.spanning_pools, 0);
  }
}

TEST(LocalSharePlan, UnevenRanksStayInsideSockets) {
  // 2 sockets x 3 cores, 4 ranks: 2,1,2,1 cores, none across the boundary.
  const int want_cores[] = {2, 1, 2, 1};
  const int want_socket[] = {0, 0, 1, 1};
  for (int rank = 0; rank < 4; ++rank) {
    Planned p = plan_on("package:2 core:3 pu:1", rank, 4);
    EXPECT_EQ(p.budget.cores, want_cores[rank]) << rank;
    ASSERT_EQ(p.budget.sockets.size(), 1u) << rank;
    EXPECT_EQ(p.budget.sockets[0].os_index, want_socket[rank]) << rank;
  }
}

TEST(LocalSharePlan, FourRanksOnTwoSocketsHalveEachSocket) {
  for (int rank = 0; rank < 4; ++rank) {
    Planned p = plan_on("package:2 core:4 pu:1", rank, 4);
    EXPECT_EQ(p.budget.cores, 2);
    ASSERT_EQ(p.budget.sockets.size(), 1u);
    EXPECT_EQ(p.budget.sockets[0].os_index, rank / 2);
  }
}

}  // namespace
}  // namespace pw::planning
