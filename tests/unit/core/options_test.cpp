// Every PARWIDTH_* option: good values, bad values, out of range.
#include <gtest/gtest.h>

#include <map>

#include "core/options.h"

namespace pw::opt {
namespace {

struct Env {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

Options parse(std::map<std::string, std::string> vars, std::vector<std::string>* warns) {
  Env e{std::move(vars)};
  return options_parse(e.lookup(), warns);
}

TEST(Options, DefaultsWithNothingSet) {
  std::vector<std::string> w;
  Options o = parse({}, &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(o.mode, Mode::kGovern);
  EXPECT_EQ(o.pools, 0);
  EXPECT_EQ(o.threads, 0);
  EXPECT_EQ(o.pin, gov::PinMode::kCore);
  EXPECT_TRUE(o.monitor);
  EXPECT_EQ(o.monitor_ms, 100);
  EXPECT_EQ(o.verbose, 0);
  EXPECT_FALSE(o.smt);
  EXPECT_FALSE(o.override_user);
  EXPECT_EQ(o.papi, PapiMode::kAuto) << "PAPI where the component is active, /proc elsewhere";
  EXPECT_EQ(o.local_rank, -1);
  EXPECT_EQ(o.local_size, -1);
}

TEST(Options, TableListsEveryOptionOfTheDesign) {
  std::vector<std::string> names;
  for (const OptionInfo& i : options_table()) names.push_back(i.name);
  for (const char* n :
       {"MODE", "POOLS", "INTRA", "MODEL", "CPUS", "SMT", "PIN", "MONITOR", "MONITOR_MS", "REPORT",
        "VERBOSE", "INCLUDE", "EXCLUDE", "TOPOLOGY", "OVERRIDE", "LOCAL_RANK", "LOCAL_SIZE"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

struct Case {
  const char* var;
  const char* value;
  bool good;
};

// One row per option and kind of value; each bad one gives exactly one
// warning naming the option, and leaves the default.
const Case kCases[] = {
    {"PARWIDTH_MODE", "off", true},
    {"PARWIDTH_MODE", "OBSERVE", true},
    {"PARWIDTH_MODE", "govern", true},
    {"PARWIDTH_MODE", "sideways", false},
    {"PARWIDTH_MODE", "", true},  // empty = unset
    {"PARWIDTH_POOLS", "3", true},
    {"PARWIDTH_POOLS", "0", false},
    {"PARWIDTH_POOLS", "4097", false},
    {"PARWIDTH_POOLS", "banana", false},
    {"PARWIDTH_POOLS", "2x", false},
    {"PARWIDTH_POOLS", "99999999999999999999", false},
    {"PARWIDTH_INTRA", "8", true},
    {"PARWIDTH_INTRA", "-1", false},
    {"PARWIDTH_MODEL", "/tmp/m.onnx", true},
    {"PARWIDTH_MODEL", "", true},  // empty = unset
    {"PARWIDTH_INPUT_SHAPES", "input=1x3x224x224,ids=8x16", true},
    {"PARWIDTH_INPUT_SHAPES", "input=1x3xbig", false},
    {"PARWIDTH_INPUT_SHAPES", "1x3", false},
    {"PARWIDTH_CPUS", "0-3,8", true},
    {"PARWIDTH_CPUS", "all", false},
    {"PARWIDTH_SMT", "1", true},
    {"PARWIDTH_SMT", "maybe", false},
    {"PARWIDTH_PIN", "pool", true},
    {"PARWIDTH_PIN", "socket", false},
    {"PARWIDTH_MONITOR", "off", true},
    {"PARWIDTH_MONITOR", "2", false},
    {"PARWIDTH_MONITOR_MS", "250", true},
    {"PARWIDTH_MONITOR_MS", "5", false},
    {"PARWIDTH_MONITOR_MS", "60001", false},
    {"PARWIDTH_REPORT", "/tmp/r-%p.json", true},
    {"PARWIDTH_REPORT", "", true},  // empty = unset
    {"PARWIDTH_VERBOSE", "3", true},
    {"PARWIDTH_VERBOSE", "4", false},
    {"PARWIDTH_INCLUDE", "python*", true},
    {"PARWIDTH_EXCLUDE", "make:gcc", true},
    {"PARWIDTH_TOPOLOGY", "synthetic:core:4", true},
    {"PARWIDTH_OVERRIDE", "yes", true},
    {"PARWIDTH_OVERRIDE", "sure", false},
    {"PARWIDTH_LOCAL_RANK", "1", true},
    {"PARWIDTH_LOCAL_RANK", "-2", false},
    {"PARWIDTH_LOCAL_SIZE", "4", true},
    {"PARWIDTH_LOCAL_SIZE", "0", false},
    {"PARWIDTH_CGROUP", "/sys/fs/cgroup", true},
    {"PARWIDTH_PAPI", "on", true},
    {"PARWIDTH_PAPI", "auto", true},
    {"PARWIDTH_PAPI", "0", true},
    {"PARWIDTH_PAPI", "sometimes", false},
    {"PARWIDTH_NODE_EXPECT", "3", true},
    {"PARWIDTH_NODE_EXPECT", "0", false},
    {"PARWIDTH_NODE_EXPECT", "three", false},
};

TEST(Options, EachValueIsAcceptedOrWarnedAbout) {
  for (const Case& c : kCases) {
    std::vector<std::string> w;
    parse({{c.var, c.value}}, &w);
    if (c.good) {
      EXPECT_TRUE(w.empty()) << c.var << "=" << c.value;
    } else {
      ASSERT_EQ(w.size(), 1u) << c.var << "=" << c.value;
      EXPECT_NE(w[0].find(c.var), std::string::npos) << w[0];
    }
  }
}

TEST(Options, EmptyMeansUnset) {
  std::vector<std::string> w;
  const Options o = parse({{"PARWIDTH_MODE", ""},
                           {"PARWIDTH_POOLS", ""},
                           {"PARWIDTH_PIN", ""},
                           {"PARWIDTH_REPORT", ""},
                           {"PARWIDTH_MONITOR_MS", ""}},
                          &w);
  EXPECT_TRUE(w.empty());
  const Options d = parse({}, &w);
  EXPECT_EQ(o.mode, d.mode);
  EXPECT_EQ(o.pools, d.pools);
  EXPECT_EQ(o.pin, d.pin);
  EXPECT_EQ(o.report, d.report);
  EXPECT_EQ(o.monitor_ms, d.monitor_ms);
}

TEST(Options, GoodValuesTakeEffect) {
  std::vector<std::string> w;
  Options o = parse({{"PARWIDTH_MODE", "observe"},
                     {"PARWIDTH_POOLS", "3"},
                     {"PARWIDTH_INTRA", "4"},
                     {"PARWIDTH_PIN", "none"},
                     {"PARWIDTH_MONITOR", "off"},
                     {"PARWIDTH_MONITOR_MS", "250"},
                     {"PARWIDTH_SMT", "on"},
                     {"PARWIDTH_OVERRIDE", "true"},
                     {"PARWIDTH_VERBOSE", "2"},
                     {"PARWIDTH_LOCAL_RANK", "1"},
                     {"PARWIDTH_LOCAL_SIZE", "2"}},
                    &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(o.mode, Mode::kObserve);
  EXPECT_EQ(o.pools, 3);
  EXPECT_EQ(o.threads, 4);
  EXPECT_EQ(o.pin, gov::PinMode::kNone);
  EXPECT_FALSE(o.monitor);
  EXPECT_EQ(o.monitor_ms, 250);
  EXPECT_TRUE(o.smt);
  EXPECT_TRUE(o.override_user);
  EXPECT_EQ(o.verbose, 2);
  EXPECT_EQ(o.local_rank, 1);
  EXPECT_EQ(o.local_size, 2);
}

TEST(Options, PapiTakesAutoOnAndOff) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({{"PARWIDTH_PAPI", "off"}}, &w).papi, PapiMode::kOff);
  EXPECT_EQ(parse({{"PARWIDTH_PAPI", "yes"}}, &w).papi, PapiMode::kOn);
  EXPECT_EQ(parse({{"PARWIDTH_PAPI", "AUTO"}}, &w).papi, PapiMode::kAuto);
  EXPECT_TRUE(w.empty());
  Options o = parse({{"PARWIDTH_PAPI", "sometimes"}}, &w);
  EXPECT_EQ(o.papi, PapiMode::kAuto);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("auto, on, off"), std::string::npos) << w[0];
}

TEST(Options, BadValueKeepsTheDefault) {
  std::vector<std::string> w;
  Options o = parse({{"PARWIDTH_POOLS", "0"}, {"PARWIDTH_MODE", "x"}}, &w);
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(o.pools, 0);
  EXPECT_EQ(o.mode, Mode::kGovern);
}

TEST(Options, RankMustBeBelowSize) {
  std::vector<std::string> w;
  Options o = parse({{"PARWIDTH_LOCAL_RANK", "2"}, {"PARWIDTH_LOCAL_SIZE", "2"}}, &w);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(o.local_rank, -1);
  EXPECT_EQ(o.local_size, -1);
}

TEST(Options, IncludeAndExcludePatterns) {
  Options o;
  EXPECT_TRUE(process_selected(o, {"python3"}));
  o.include = "python*:torchrun";
  EXPECT_TRUE(process_selected(o, {"python3.11"}));
  EXPECT_FALSE(process_selected(o, {"bash"}));
  o.include.clear();
  o.exclude = "make,gcc*";
  EXPECT_FALSE(process_selected(o, {"gcc-12"}));
  EXPECT_TRUE(process_selected(o, {"python3"}));
  EXPECT_FALSE(process_selected(o, {"bash", "make"})) << "any of the names matches";
  o.exclude.clear();
  o.mode = Mode::kOff;
  EXPECT_FALSE(process_selected(o, {"python3"}));
}

TEST(Options, DescribeListsEveryOption) {
  EXPECT_EQ(options_describe(Options{}).size(), options_table().size());
}

}  // namespace
}  // namespace pw::opt
