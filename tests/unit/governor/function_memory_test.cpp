// governor/function_memory: the program's identity, the graph that stands for a run's
// function graphs, and the memory file's format against every kind of damage.
#include "governor/function_memory.h"

#include <gtest/gtest.h>

namespace pw::gov {
namespace {

const std::vector<std::string> kTemps = {"/tmp", "/var/tmp/"};

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) s.push_back('\0');
    s += parts[i];
  }
  return s;
}

TEST(ProgramIdentity, OutputFilesUnderTempDirsAreVolatile) {
  const std::vector<std::string> r = {"/usr/bin/python3.11", "/home/u/train.py"};
  const std::string a =
      program_identity({"python", "train.py", "--json", "/tmp/a/1.json"}, r, kTemps);
  const std::string b =
      program_identity({"python", "train.py", "--json", "/tmp/b/2.json"}, r, kTemps);
  const std::string c =
      program_identity({"python", "train.py", "--json=/var/tmp/x.json"}, r, kTemps);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, joined({"/usr/bin/python3.11", "/home/u/train.py", "--json"}));
  EXPECT_NE(a, c);  // "--json=..." is dropped whole: the flag differs from "--json"
  EXPECT_EQ(c, joined({"/usr/bin/python3.11", "/home/u/train.py"}));
}

TEST(ProgramIdentity, ArgumentsThatChangeTheProgramCount) {
  const std::vector<std::string> r = {"/usr/bin/python3.11", "/home/u/train.py"};
  EXPECT_NE(program_identity({"python", "train.py", "--batch", "32"}, r, kTemps),
            program_identity({"python", "train.py", "--batch", "64"}, r, kTemps));
  // Another script, another program; a script is named by its resolved path.
  EXPECT_NE(program_identity({"python", "a.py"}, {"/usr/bin/python3.11", "/home/u/a.py"}, kTemps),
            program_identity({"python", "b.py"}, {"/usr/bin/python3.11", "/home/u/b.py"}, kTemps));
  EXPECT_EQ(program_identity({"python", "./a.py"}, {"/usr/bin/python3.11", "/home/u/a.py"}, kTemps),
            program_identity({"python3", "/home/u/a.py"}, {"/usr/bin/python3.11", "/home/u/a.py"},
                             kTemps));
}

TEST(ProgramIdentity, TheScriptIsKeptEvenUnderATempDir) {
  const std::vector<std::string> r = {"/usr/bin/python3.11", "/tmp/clone/train.py", ""};
  const std::string id =
      program_identity({"python", "/tmp/clone/train.py", "/tmp/o.json"}, r, kTemps);
  EXPECT_EQ(id, joined({"/usr/bin/python3.11", "/tmp/clone/train.py"}));
  // A directory named like a temp dir is not one ("/tmpfoo").
  EXPECT_NE(program_identity({"x", "/tmpfoo/a"}, {"/bin/x"}, kTemps),
            program_identity({"x"}, {"/bin/x"}, kTemps));
}

FunctionGraph fg(const std::string& name, long heavy, long width, const std::string& costs,
                 double work) {
  FunctionGraph g;
  g.name = name;
  g.heavy = heavy;
  g.avg_width = width;
  g.costs = costs;
  g.work_flops = work;
  return g;
}

TEST(FunctionPick, MostWorkThenMostHeavyThenWidest) {
  EXPECT_EQ(function_pick({}), -1);
  EXPECT_EQ(function_pick({fg("a", 0, 1, "unit", 0)}), -1);  // nothing heavy: nothing to plan
  EXPECT_EQ(function_pick({fg("a", 3, 1, "flops", 1e6), fg("b", 2, 2, "flops", 5e6)}), 1);
  EXPECT_EQ(function_pick({fg("a", 3, 1, "unit", 0), fg("b", 2, 2, "flops", 5e6)}), 0);
  EXPECT_EQ(function_pick({fg("a", 3, 1, "unit", 0), fg("b", 3, 2, "unit", 0)}), 1);
  EXPECT_EQ(function_pick({fg("a", 3, 2, "unit", 0), fg("b", 3, 2, "unit", 0)}), 0);
}

FunctionMemory sample() {
  FunctionMemory m;
  m.program = identity_hash("x");
  m.saved = 1796000000;
  m.graph = fg("__inference_one_step_on_data_812", 7, 2, "flops", 1234.5);
  m.graph.layers = 3;
  m.graph.max_level_width = 4;
  m.graph.weighted_parallelism = 2.25;
  m.graph.span_flops = 600.25;
  m.graph.cost_graph.ops = {{10, 40, {}}, {100.5, 8, {0}}, {0, 0, {0, 1}}};
  return m;
}

TEST(FunctionMemoryFormat, RoundTrip) {
  const FunctionMemory m = sample();
  FunctionMemory back;
  std::string why;
  ASSERT_TRUE(function_memory_parse(function_memory_format(m), &back, &why)) << why;
  EXPECT_EQ(back.program, m.program);
  EXPECT_EQ(back.saved, m.saved);
  EXPECT_EQ(back.graph.name, m.graph.name);
  EXPECT_TRUE(back.graph.known);  // what the next run plans from
  EXPECT_EQ(back.graph.heavy, 7);
  EXPECT_EQ(back.graph.layers, 3);
  EXPECT_EQ(back.graph.avg_width, 2);
  EXPECT_EQ(back.graph.max_level_width, 4);
  EXPECT_DOUBLE_EQ(back.graph.weighted_parallelism, 2.25);
  EXPECT_EQ(back.graph.costs, "flops");
  EXPECT_DOUBLE_EQ(back.graph.work_flops, 1234.5);
  EXPECT_DOUBLE_EQ(back.graph.span_flops, 600.25);
  ASSERT_EQ(back.graph.cost_graph.ops.size(), 3u);
  EXPECT_DOUBLE_EQ(back.graph.cost_graph.ops[1].flops, 100.5);
  EXPECT_EQ(back.graph.cost_graph.ops[2].preds, (std::vector<uint32_t>{0, 1}));
  // Unit costs: no operators are written.
  FunctionMemory u = m;
  u.graph.costs = "unit";
  ASSERT_TRUE(function_memory_parse(function_memory_format(u), &back, &why)) << why;
  EXPECT_TRUE(back.graph.cost_graph.ops.empty());
  EXPECT_EQ(back.graph.costs, "unit");
}

TEST(FunctionMemoryFormat, TruncatedAtEveryLengthIsRefused) {
  const std::string t = function_memory_format(sample());
  for (size_t n = 0; n < t.size(); ++n) {
    FunctionMemory out;
    std::string why;
    EXPECT_FALSE(function_memory_parse(t.substr(0, n), &out, &why)) << n;
    EXPECT_FALSE(why.empty());
  }
}

TEST(FunctionMemoryFormat, EachDamageIsRefused) {
  const std::string t = function_memory_format(sample());
  auto refused = [](std::string text) {
    FunctionMemory out;
    std::string why;
    return !function_memory_parse(text, &out, &why) && !why.empty();
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = t;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_TRUE(refused(replace("parwidth-tf-functions 1", "parwidth-tf-functions 2")));
  EXPECT_TRUE(refused(replace("saved 1796000000", "saved -5")));
  EXPECT_TRUE(refused(replace("saved 1796000000", "saved 17x")));
  EXPECT_TRUE(refused(replace("__inference", "__in ference")));
  EXPECT_TRUE(refused(replace("__inference", "__in$ference")));
  EXPECT_TRUE(refused(replace(" 7 3 2 4 ", " 7 3 0 4 ")));  // avg_width 0
  EXPECT_TRUE(refused(replace(" flops ", " magic ")));
  EXPECT_TRUE(refused(replace("2.25", "nan")));
  EXPECT_TRUE(refused(replace("op 0 0 0 1", "op 0 0 0 3")));  // pred out of range
  EXPECT_TRUE(refused(replace("op 0 0 0 1", "op 0 0 0 2")));  // its own pred
  EXPECT_TRUE(refused(replace("op 10 40\n", "")));            // fewer ops than said
  EXPECT_TRUE(refused(replace("end\n", "")));
  EXPECT_TRUE(refused(replace("end\n", "end\nmore\n")));
  EXPECT_TRUE(refused(std::string(kFunctionMemoryMaxBytes + 1, 'x')));
  EXPECT_TRUE(refused(""));
}

TEST(IdentityHash, SixteenHexDigits) {
  EXPECT_EQ(identity_hash("").size(), 16u);
  EXPECT_EQ(identity_hash(""), "cbf29ce484222325");  // FNV-1a offset basis
  EXPECT_NE(identity_hash("a"), identity_hash("b"));
}

}  // namespace
}  // namespace pw::gov
