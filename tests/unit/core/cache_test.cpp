// The calibration cache on disk: a good file is used; corrupt, truncated,
// foreign-machine, other-budget, stale and symlinked files give one warning
// and the built-in model; concurrent writers never leave a torn file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "core/cache.h"

namespace pw::cache {
namespace {

constexpr int64_t kNow = 1'800'000'000;
const char kMachine[] = "Test CPU | 1 sockets 2 cores 2 pus";
const char kBudget[] = "cpus 0-1 quota none";

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/pw-cache-test-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

std::string calibration_text(const std::string& machine, const std::string& budget, int64_t created,
                             double overhead = 5e-6) {
  gov::Calibration c;
  c.machine = machine;
  c.budget = budget;
  c.created = created;
  c.model = gov::builtin_model(2);
  c.model.op_overhead_s = overhead;
  return gov::calibration_format(c);
}

void write_plain(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

gov::MachineModel load(const std::string& dir, bool* found, std::string* warning) {
  return calibration_load(dir, kMachine, kBudget, 2, gov::CpuTraits{}, kNow, found, warning);
}

// Budgets of a 2-socket, 2 x 4 cores, SMT-2 machine, as budget_compute makes them.
topo::Budget budget_of(const std::string& cpus, double quota = 0) {
  topo::Machine m;
  std::string err;
  EXPECT_EQ(topo::machine_load("synthetic:package:2 core:4 pu:2", &m, &err), topo::Status::kOk)
      << err;
  topo::BudgetInputs in;
  in.use_cgroup = quota > 0;
  in.cgroup.quota_cpus = quota;
  EXPECT_EQ(topo::cpulist_parse(cpus, &in.affinity, &err), topo::Status::kOk) << err;
  in.smt = true;
  topo::Budget b;
  EXPECT_EQ(topo::budget_compute(m, in, &b, &err), topo::Status::kOk) << err;
  return b;
}

TEST(Cache, BudgetIsNamedByItsShapeNotItsCpus) {
  // A job placed on other CPUs of the same shape reuses the calibration and plans.
  EXPECT_EQ(budget_id(budget_of("0-3")), budget_id(budget_of("4-7")));
  EXPECT_EQ(budget_id(budget_of("0-3")), "cores 2 pus 4 quota none");
  // Another core count, another spread over the sockets, another quota: another budget.
  EXPECT_NE(budget_id(budget_of("0-3")), budget_id(budget_of("0-5")));
  EXPECT_NE(budget_id(budget_of("6-9")), budget_id(budget_of("0-3")));  // 1 + 1 cores
  EXPECT_EQ(budget_id(budget_of("6-9")), "cores 1+1 pus 4 quota none");
  EXPECT_NE(budget_id(budget_of("0-3", 1.5)), budget_id(budget_of("0-3")));
}

TEST(Cache, DirectoryFromEnvironment) {
  auto env = [](const char* xdg, const char* home) {
    return [=](const char* n) -> const char* {
      if (std::string(n) == "XDG_CACHE_HOME") return xdg;
      if (std::string(n) == "HOME") return home;
      return nullptr;
    };
  };
  EXPECT_EQ(cache_dir(env("/x/cache", "/home/u")), "/x/cache/parwidth");
  EXPECT_EQ(cache_dir(env("relative", "/home/u")), "/home/u/.cache/parwidth");
  EXPECT_EQ(cache_dir(env(nullptr, "/home/u")), "/home/u/.cache/parwidth");
  EXPECT_EQ(cache_dir(env(nullptr, nullptr)), "");
}

TEST(Cache, GoodFileIsUsedAndPrivate) {
  TempDir t;
  const std::string dir = t.path + "/a/parwidth";
  std::string why;
  ASSERT_TRUE(file_write_atomic(dir, calibration_name(kMachine, kBudget),
                                calibration_text(kMachine, kBudget, kNow - 10, 7e-6), &why))
      << why;
  struct stat st;
  ASSERT_EQ(stat((dir + "/" + calibration_name(kMachine, kBudget)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  bool found = false;
  std::string warning;
  const gov::MachineModel m = load(dir, &found, &warning);
  EXPECT_TRUE(found);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(m.source, "calibration");
  EXPECT_DOUBLE_EQ(m.op_overhead_s, 7e-6);
}

TEST(Cache, MissingFileIsSilentBuiltin) {
  TempDir t;
  bool found = true;
  std::string warning = "x";
  EXPECT_EQ(load(t.path, &found, &warning).source, "builtin");
  EXPECT_FALSE(found);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(load("", &found, &warning).source, "builtin");
}

TEST(Cache, BadFilesWarnOnceAndUseBuiltin) {
  TempDir t;
  const std::string path = t.path + "/" + calibration_name(kMachine, kBudget);
  const std::string good = calibration_text(kMachine, kBudget, kNow - 10);
  struct Case {
    const char* what;
    std::string text;
    const char* expect;
  };
  const Case cases[] = {
      {"corrupt", "garbage\n\x01\x02", "corrupt"},
      {"truncated", good.substr(0, good.size() / 2), "corrupt"},
      {"other machine", calibration_text("Other CPU | 2 sockets 96 cores", kBudget, kNow - 10),
       "another machine"},
      {"other budget", calibration_text(kMachine, "cpus 0 quota none", kNow - 10),
       "another CPU budget"},
      {"stale", calibration_text(kMachine, kBudget, kNow - gov::kCalibrationMaxAge - 5), "stale"},
      {"oversized", std::string(gov::kCalibrationMaxBytes + 10, 'x'), "larger than"},
  };
  for (const Case& c : cases) {
    write_plain(path, c.text);
    bool found = true;
    std::string warning;
    const gov::MachineModel m = load(t.path, &found, &warning);
    EXPECT_EQ(m.source, "builtin") << c.what;
    EXPECT_FALSE(found) << c.what;
    EXPECT_NE(warning.find(c.expect), std::string::npos) << c.what << ": " << warning;
    EXPECT_EQ(warning.find('\n'), std::string::npos) << "one line";
  }
}

TEST(Cache, SymlinksAreRefused) {
  TempDir t;
  const std::string real = t.path + "/real.txt";
  write_plain(real, calibration_text(kMachine, kBudget, kNow - 10));
  ASSERT_EQ(symlink(real.c_str(), (t.path + "/" + calibration_name(kMachine, kBudget)).c_str()), 0);
  bool found = true;
  std::string warning;
  EXPECT_EQ(load(t.path, &found, &warning).source, "builtin");
  EXPECT_NE(warning.find("symlink"), std::string::npos) << warning;

  // A symlinked cache directory is not written into.
  const std::string target = t.path + "/elsewhere";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), (t.path + "/linked").c_str()), 0);
  std::string why;
  EXPECT_FALSE(file_write_atomic(t.path + "/linked", "x.txt", "x\n", &why));
  EXPECT_NE(why.find("symlink"), std::string::npos) << why;
  struct stat st;
  EXPECT_NE(stat((target + "/x.txt").c_str(), &st), 0);
}

TEST(Cache, ConcurrentWritersNeverTearTheFile) {
  TempDir t;
  const std::string name = calibration_name(kMachine, kBudget);
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 40; ++i) {
        std::string why;
        EXPECT_TRUE(file_write_atomic(
            t.path, name, calibration_text(kMachine, kBudget, kNow - 10, 1e-6 * (w * 100 + i + 1)),
            &why))
            << why;
      }
    });
  }
  int reads = 0;
  for (int i = 0; i < 200; ++i) {
    bool found = false;
    std::string warning;
    const gov::MachineModel m = load(t.path, &found, &warning);
    if (!found && warning.empty()) continue;  // nothing written yet
    EXPECT_TRUE(found) << warning;
    EXPECT_EQ(m.source, "calibration");
    ++reads;
  }
  for (std::thread& th : writers) th.join();
  bool found = false;
  std::string warning;
  load(t.path, &found, &warning);
  EXPECT_TRUE(found) << warning;
  // No temporary file is left behind.
  EXPECT_EQ(system(("test $(ls -A '" + t.path + "' | wc -l) -eq 1").c_str()), 0);
}

}  // namespace
}  // namespace pw::cache
