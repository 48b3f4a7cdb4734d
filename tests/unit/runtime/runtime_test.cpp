// The runtime core without a preload: activation plans, the OpenMP team cap
// follows the keep / apply / replace decision, the report says why, and the
// entry points hooks/ registers are called at activation.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "runtime/api.h"

namespace pw::rt {
namespace {

int g_activations = 0;
void count_activation() {
  ++g_activations;
}

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A governed process of 3 threads per pool that neither pins nor watches nor
// joins the node registry (the test process stays as it is).
class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = ::testing::TempDir() + "pw-runtime-" + std::to_string(getpid()) + ".json";
    setenv("PARWIDTH_MODE", "govern", 1);
    setenv("PARWIDTH_INTRA", "3", 1);
    setenv("PARWIDTH_PIN", "none", 1);
    setenv("PARWIDTH_MONITOR", "off", 1);
    setenv("PARWIDTH_NODE", "0", 1);
    setenv("PARWIDTH_REPORT", report_.c_str(), 1);
    unsetenv("PARWIDTH_OVERRIDE");
    unsetenv("OMP_NUM_THREADS");
    g_activations = 0;
    hooks_register({count_activation, nullptr, nullptr, nullptr, nullptr, nullptr});
  }
  void TearDown() override { unlink(report_.c_str()); }
  // Loads, activates and exits the runtime; the report's text.
  std::string run() {
    on_load();
    EXPECT_TRUE(selected());
    EXPECT_TRUE(ensure_active());
    cap_ = omp_cap();
    governing_ = governing();
    on_exit();
    return file_text(report_);
  }
  std::string report_;
  int cap_ = -1;
  bool governing_ = false;
};

TEST_F(Runtime, CapsOpenMpTeamsAtThePlansThreads) {
  const std::string j = run();
  EXPECT_TRUE(governing_);
  EXPECT_EQ(cap_, 3);
  EXPECT_NE(j.find("\"plan: threads per pool\""), std::string::npos) << j;
  EXPECT_EQ(g_activations, 1);
}

TEST_F(Runtime, KeepsTheUsersOmpNumThreads) {
  setenv("OMP_NUM_THREADS", "5", 1);
  const std::string j = run();
  EXPECT_EQ(cap_, 0);
  EXPECT_NE(j.find("\"set by the user; kept (PARWIDTH_OVERRIDE=1 replaces it)\""),
            std::string::npos)
      << j;
}

TEST_F(Runtime, OverrideReplacesTheUsersOmpNumThreads) {
  setenv("OMP_NUM_THREADS", "5", 1);
  setenv("PARWIDTH_OVERRIDE", "1", 1);
  const std::string j = run();
  EXPECT_EQ(cap_, 3);
  EXPECT_NE(j.find("\"OMP_NUM_THREADS=5 replaced (PARWIDTH_OVERRIDE=1)\""), std::string::npos) << j;
}

TEST_F(Runtime, ObserveModeChangesNothing) {
  setenv("PARWIDTH_MODE", "observe", 1);
  const std::string j = run();
  EXPECT_FALSE(governing_);
  EXPECT_EQ(cap_, 0);
  EXPECT_NE(j.find("\"observe mode: nothing changed\""), std::string::npos) << j;
}

}  // namespace
}  // namespace pw::rt
