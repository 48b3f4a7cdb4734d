// Hostile and broken inputs: every one ends in an error status (or a valid graph), never a
// crash, a hang or a stack overflow; the width command turns errors into exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/unit/graph/test_util.h"

namespace pw::graph {
namespace {

using namespace test;  // NOLINT

std::string fixture_bytes(const std::string& rel) {
  std::ifstream f(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Status parse(const std::string& b, Format f, std::string* err = nullptr) {
  Graph g;
  std::string e;
  Status s = model_parse(b.data(), b.size(), f, &g, err ? err : &e);
  if (s == Status::kOk) {
    Stats st;
    s = stats_compute(g, &st, &e);
  }
  return s;
}

TEST(BadInput, TruncatedModelsAreErrors) {
  for (const char* name :
       {"resnet50.onnx", "tf_wide_deep.pb", "tf_wide_deep_savedmodel/saved_model.pb"}) {
    std::string b = fixture_bytes(name);
    ASSERT_FALSE(b.empty()) << name;
    Graph full;
    std::string err;
    ASSERT_EQ(model_parse(b.data(), b.size(), Format::kAuto, &full, &err), Status::kOk) << err;
    for (size_t cut = 0; cut < b.size(); cut += 1 + b.size() / 997) {
      Graph g;
      Status s = model_parse(b.data(), cut, Format::kAuto, &g, &err);
      // ONNX and SavedModel wrap everything in one outer field whose length then runs past
      // the end. A GraphDef is a bare run of node fields: a cut between two nodes is a valid,
      // smaller GraphDef, which protobuf cannot tell apart. It must be smaller, though.
      const bool bare = std::string(name) == "tf_wide_deep.pb";
      if (!bare) {
        EXPECT_NE(s, Status::kOk) << name << " cut at " << cut;
      } else if (s == Status::kOk) {
        EXPECT_LT(g.nodes.size(), full.nodes.size()) << name << " cut at " << cut;
      }
    }
  }
}

TEST(BadInput, WrongMagicZeroBytesAndGarbage) {
  std::string err;
  EXPECT_NE(parse("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", Format::kAuto, &err), Status::kOk);
  EXPECT_NE(parse("", Format::kAuto), Status::kOk);
  EXPECT_NE(parse(std::string(4096, '\0'), Format::kAuto), Status::kOk);
  EXPECT_NE(parse(std::string(4096, '\xff'), Format::kAuto), Status::kOk);
  EXPECT_NE(parse("ir_version: 8\ngraph { }", Format::kAuto), Status::kOk);  // text format
}

TEST(BadInput, AbsurdLengths) {
  // Field 7 (graph) claiming 2^62 bytes, a varint of 11 bytes, a group wire type.
  EXPECT_EQ(parse(field_varint(1, 8) + varint((7 << 3) | 2) + varint(uint64_t{1} << 62) + "xx",
                  Format::kOnnx),
            Status::kBadFormat);
  EXPECT_EQ(parse(std::string("\x08") + std::string(10, '\xff') + "\x01", Format::kOnnx),
            Status::kBadFormat);
  EXPECT_EQ(parse(std::string("\x0b\x0c"), Format::kOnnx), Status::kBadFormat);
  EXPECT_EQ(parse(field_bytes(1, tf_node("a", "MatMul", {})) + varint((1 << 3) | 2) + varint(1000),
                  Format::kTfGraphDef),
            Status::kBadFormat);
}

TEST(BadInput, DeeplyNestedMessagesStopAtTheDepthLimit) {
  // ONNX If bodies nested 10000 deep: the reader stops at its depth limit with an error
  // instead of recursing 10000 times.
  std::string body = onnx_node("Relu", {"x"}, {"y"}, "leaf");
  for (int i = 0; i < 10000; ++i)
    body = onnx_node("If", {"c"}, {"y"}, "if", onnx_graph_attr("then_branch", body));
  std::string err;
  EXPECT_EQ(parse(onnx_model(body), Format::kOnnx, &err), Status::kBadFormat);
  EXPECT_NE(err.find("deep"), std::string::npos) << err;
  // JSON nested 100000 deep.
  EXPECT_EQ(parse("{\"nodes\":" + std::string(100000, '[') + std::string(100000, ']') + "}",
                  Format::kJson),
            Status::kBadFormat);
}

TEST(BadInput, CyclicGraphsAreErrors) {
  std::string g = onnx_node("Conv", {"b", "W"}, {"a"}, "n1") +
                  onnx_node("Conv", {"a", "W"}, {"b"}, "n2") + onnx_initializer("W", {1, 1, 1, 1});
  EXPECT_EQ(parse(onnx_model(g), Format::kOnnx), Status::kCycle);
  EXPECT_EQ(parse(tf_graph({tf_node("a", "MatMul", {"b"}), tf_node("b", "MatMul", {"^a"})}),
                  Format::kTfGraphDef),
            Status::kCycle);
  EXPECT_EQ(parse(R"({"nodes":[{"name":"a","op":"MatMul","inputs":["a"]}]})", Format::kJson),
            Status::kCycle);
}

TEST(BadInput, RecursiveTfFunctionsAreBounded) {
  // f calls itself twice: inlining stops at its depth limit or its node limit, never hangs.
  std::string lib = tf_function("f", {"x"}, {{"y", "c2:output:0"}},
                                {tf_node("c1", "PartitionedCall", {"x"}, "f"),
                                 tf_node("c2", "PartitionedCall", {"c1:output:0"}, "f")});
  Graph g;
  std::string err;
  std::string b = tf_graph(
      {tf_node("x", "Placeholder", {}), tf_node("call", "PartitionedCall", {"x"}, "f")}, lib);
  Status s = model_parse(b.data(), b.size(), Format::kTfGraphDef, &g, &err);
  EXPECT_TRUE(s == Status::kOk || s == Status::kTooLarge) << status_name(s);
}

struct CmdResult {
  int code;
  std::string err;
};

CmdResult run_width(const std::string& arg) {
  // The driver is pw_cmd_width itself: its argv[1] is the model, as after `parwidth width`.
  std::string cmd = std::string(PW_WIDTH_DRIVER) + " '" + arg + "' 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && std::fgets(buf, sizeof(buf), p)) out += buf;
  int status = p ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(BadInput, WidthCommandExitsTwoWithOneLine) {
  char dir[] = "/tmp/pw_graph_badXXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string base(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(base + "/" + name, std::ios::binary) << bytes;
    return base + "/" + name;
  };
  std::string b = fixture_bytes("resnet50.onnx");
  // The whole model is read: the driver itself works, so the failures below are the files'.
  const CmdResult whole = run_width(write("whole.onnx", b));
  EXPECT_EQ(whole.code, 0) << whole.err;
  for (const std::string& path :
       {write("trunc.onnx", b.substr(0, b.size() / 2)), write("magic.onnx", "\x89PNG\r\n\x1a\n"),
        write("zero.onnx", ""), write("zero.pb", ""), write("garbage.pb", std::string(100, '\xee')),
        write("cycle.json", R"({"nodes":[{"name":"a","op":"MatMul","inputs":["a"]}]})"), base,
        base + "/missing.onnx"}) {
    CmdResult r = run_width(path);
    EXPECT_EQ(r.code, 2) << path;
    EXPECT_EQ(r.err.rfind("parwidth: error: ", 0), 0u) << path << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_NE(r.err.find(path.substr(base.size())), std::string::npos)
        << "names the file: " << r.err;
  }
}

}  // namespace
}  // namespace pw::graph
