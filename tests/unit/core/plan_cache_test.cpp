// Measured plans on disk (core/cache): a stored plan is found by graph and
// budget and decides the plan; a missing file is silent; corrupt, truncated,
// foreign, other-budget, symlinked, oversized files give one warning and the
// next source (the model); concurrent writers never leave a torn file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <vector>

#include "core/cache.h"
#include "core/planning.h"

namespace pw::cache {
namespace {

constexpr int64_t kNow = 1'800'000'000;
const char kMachine[] = "Test CPU | 1 sockets 2 cores 2 pus";
const char kBudget[] = "cpus 0-1 quota none";
const char kGraph[] = "0123456789abcdef";

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/pw-plan-cache-test-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

gov::StoredPlan sample(int pools = 1, int threads = 2) {
  gov::StoredPlan s;
  s.machine = kMachine;
  s.budget = kBudget;
  s.graph = kGraph;
  s.plan.known = true;
  s.plan.pools = pools;
  s.plan.threads = threads;
  s.plan.seconds = 0.25;
  s.plan.min = 0.2;
  s.plan.max = 0.3;
  s.plan.runs = 8;
  s.plan.created = kNow - 60;
  s.plan.by = "tune";
  s.plan.version = "0.1.0";
  s.plan.metric = "wall seconds";
  return s;
}

gov::MeasuredPlan load(const std::string& dir, std::string* warning) {
  return measured_load(dir, kMachine, kBudget, kGraph, kNow, warning);
}

std::string file_of(const std::string& dir) {
  return dir + "/" + plan_file_name(kMachine, kBudget, kGraph);
}

TEST(PlanCache, StoredPlanIsFoundAndPrivate) {
  TempDir t;
  const std::string dir = t.path + "/c/parwidth";
  std::string path, why;
  ASSERT_TRUE(measured_store(dir, sample(), &path, &why)) << why;
  EXPECT_EQ(path, file_of(dir));
  EXPECT_EQ(path.find(dir + "/plan-" + kGraph + "-"), 0u);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string warning;
  const gov::MeasuredPlan m = load(dir, &warning);
  EXPECT_EQ(warning, "");
  EXPECT_TRUE(m.known);
  EXPECT_EQ(m.pools, 1);
  EXPECT_EQ(m.threads, 2);
  EXPECT_EQ(m.by, "tune");
  // Another graph or another budget has another file: silently not found.
  EXPECT_FALSE(measured_load(dir, kMachine, kBudget, "fedcba9876543210", kNow, &warning).known);
  EXPECT_EQ(warning, "");
  EXPECT_FALSE(measured_load(dir, kMachine, "cpus 0 quota none", kGraph, kNow, &warning).known);
  EXPECT_EQ(warning, "");
}

TEST(PlanCache, MissingIsSilent) {
  TempDir t;
  std::string warning;
  EXPECT_FALSE(load(t.path + "/none", &warning).known);
  EXPECT_EQ(warning, "");
  EXPECT_FALSE(load("", &warning).known);
  EXPECT_FALSE(measured_load(t.path, kMachine, kBudget, "", kNow, &warning).known);
  EXPECT_EQ(warning, "");
}

TEST(PlanCache, BadFilesWarnOnceAndAreNotUsed) {
  TempDir t;
  const std::string good = gov::plan_file_format(sample());
  gov::StoredPlan other = sample();
  other.machine = "Other CPU | 1 sockets 2 cores 2 pus";
  gov::StoredPlan budget = sample();
  budget.budget = "cpus 0 quota none";
  const std::pair<std::string, std::string> cases[] = {
      {"corrupt", "parwidth-plan 1\nmachine x\n"},
      {"corrupt", good.substr(0, good.size() / 2)},  // truncated
      {"corrupt", good.substr(0, good.size() - 4)},  // cut before 'end'
      {"another machine", gov::plan_file_format(other)},
      {"another CPU budget", gov::plan_file_format(budget)},
      {"unreadable", std::string(gov::kPlanFileMaxBytes + 10, 'x')},
  };
  for (const auto& [what, text] : cases) {
    std::ofstream(file_of(t.path), std::ios::binary | std::ios::trunc) << text;
    std::string warning;
    EXPECT_FALSE(load(t.path, &warning).known) << what;
    EXPECT_NE(warning.find(what), std::string::npos) << warning;
    EXPECT_NE(warning.find("--forget"), std::string::npos) << warning;
    EXPECT_EQ(warning.find('\n'), std::string::npos);  // one line
  }
}

TEST(PlanCache, SymlinksAreRefused) {
  TempDir t;
  const std::string real = t.path + "/real.txt";
  std::ofstream(real) << gov::plan_file_format(sample());
  ASSERT_EQ(symlink(real.c_str(), file_of(t.path).c_str()), 0);
  std::string warning;
  EXPECT_FALSE(load(t.path, &warning).known);
  EXPECT_NE(warning.find("symlink"), std::string::npos) << warning;
  // A symlinked cache directory is refused for writing.
  const std::string linked = t.path + "/linked";
  ASSERT_EQ(mkdir((t.path + "/target").c_str(), 0700), 0);
  ASSERT_EQ(symlink((t.path + "/target").c_str(), linked.c_str()), 0);
  std::string path, why;
  EXPECT_FALSE(measured_store(linked, sample(), &path, &why));
  EXPECT_NE(why.find("symlink"), std::string::npos) << why;
}

TEST(PlanCache, ConcurrentWriterProcessesNeverTearTheFile) {
  TempDir t;
  std::vector<pid_t> kids;
  for (int w = 0; w < 4; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      for (int i = 0; i < 40; ++i) {
        std::string path, why;
        ok = measured_store(t.path, sample(1 + (w % 2), 1 + i % 4), &path, &why) && ok;
      }
      _exit(ok ? 0 : 1);
    }
    kids.push_back(pid);
  }
  int seen = 0;
  for (int i = 0; i < 300; ++i) {
    std::string warning;
    const gov::MeasuredPlan m = load(t.path, &warning);
    EXPECT_EQ(warning, "");  // never torn: missing (not yet written) or whole
    seen += m.known;
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string warning;
  EXPECT_TRUE(load(t.path, &warning).known) << warning;
  // One file, no temporary left behind, and the listing shows it.
  const std::vector<PlanFile> files = plan_files(t.path, kNow);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].status, Status::kOk);
  EXPECT_EQ(system(("test $(ls -A '" + t.path + "' | wc -l) -eq 1").c_str()), 0);
  (void)seen;
}

TEST(PlanCache, ListingShowsValidAndBrokenFiles) {
  TempDir t;
  std::string path, why;
  ASSERT_TRUE(measured_store(t.path, sample(), &path, &why)) << why;
  gov::StoredPlan other = sample(2, 1);
  other.graph = "fedcba9876543210";
  ASSERT_TRUE(measured_store(t.path, other, &path, &why)) << why;
  std::ofstream(t.path + "/plan-aaaa-0000.txt") << "garbage\n";
  std::ofstream(t.path + "/calibration-0000.txt") << "not a plan\n";
  const std::vector<PlanFile> files = plan_files(t.path, kNow);
  ASSERT_EQ(files.size(), 3u);
  int ok = 0;
  for (const PlanFile& f : files) ok += f.status == Status::kOk;
  EXPECT_EQ(ok, 2);
  // A fingerprint cannot lead a name out of the directory.
  EXPECT_EQ(plan_file_name(kMachine, kBudget, "../../x").find('/'), std::string::npos);
}

// The pipeline (core/planning): the stored plan for the graph's fingerprint
// decides before the model; a bad file is one warning and the model plans.
TEST(PlanCache, PlanningUsesTheStoredPlanThenTheModel) {
  TempDir t;
  const std::string xdg = t.path;
  opt::EnvLookup env = [&](const char* n) -> const char* {
    return std::string(n) == "XDG_CACHE_HOME" ? xdg.c_str() : nullptr;
  };
  opt::Options o;
  o.topology = "synthetic:package:1 core:2 pu:1";
  planning::Planned p;
  std::string err;
  ASSERT_TRUE(planning::plan_process(o, env, nullptr, &p, &err)) << err;
  planning::GraphSummary g;
  g.known = true;
  g.avg_width = 2;
  g.max_level_width = 2;
  g.costs = "flops";
  g.costs_known = true;
  g.cost_graph.ops.resize(2);
  for (auto& op : g.cost_graph.ops) op.flops = 1e8;
  g.fingerprint = kGraph;
  std::vector<std::string> warnings;
  bool found = false;
  EXPECT_EQ(planning::plan_with_cache(o, env, p.machine, p.budget, g, &warnings, &found).source,
            "model");
  EXPECT_TRUE(warnings.empty());

  gov::StoredPlan s = sample(1, 3);
  s.machine = machine_id(p.machine);
  s.budget = budget_id(p.budget);
  s.plan.created = static_cast<int64_t>(time(nullptr)) - 60;  // the pipeline reads the clock
  std::string path, why;
  ASSERT_TRUE(measured_store(cache_dir(env), s, &path, &why)) << why;
  gov::Plan plan = planning::plan_with_cache(o, env, p.machine, p.budget, g, &warnings, &found);
  EXPECT_EQ(plan.source, "measured");
  EXPECT_EQ(plan.pools, 1);
  EXPECT_EQ(plan.threads, 3);
  EXPECT_TRUE(plan.measured.known);
  EXPECT_TRUE(warnings.empty());
  // PARWIDTH_PLAN=model or the user's counts leave it alone.
  opt::Options m = o;
  m.plan = gov::PlanMode::kModel;
  EXPECT_EQ(planning::plan_with_cache(m, env, p.machine, p.budget, g, &warnings, &found).source,
            "model");
  m = o;
  m.pools = 2;
  EXPECT_EQ(planning::plan_with_cache(m, env, p.machine, p.budget, g, &warnings, &found).source,
            "user");
  // A graph without a fingerprint (statistics only) cannot have one.
  planning::GraphSummary anon = g;
  anon.fingerprint.clear();
  EXPECT_EQ(planning::plan_with_cache(o, env, p.machine, p.budget, anon, &warnings, &found).source,
            "model");

  std::ofstream(path, std::ios::trunc) << "parwidth-plan 1\npools 1\n";
  warnings.clear();
  plan = planning::plan_with_cache(o, env, p.machine, p.budget, g, &warnings, &found);
  EXPECT_EQ(plan.source, "model");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("corrupt"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace pw::cache
