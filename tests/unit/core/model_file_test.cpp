// core/model_file: the I/O half of reading a model, beside graph/'s pure parser. A
// SavedModel directory is read as its saved_model.pb, a symlink to a model is followed,
// a FIFO is refused without blocking, and every error names the path and is one status.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/model_file.h"

namespace pw::files {
namespace {

const std::string kModels = std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/";

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/pw-model-file-test-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ModelFile, ReadsAFileAsTheParserDoesItsBytes) {
  graph::Graph from_file, from_bytes;
  std::string err;
  ASSERT_EQ(model_load(kModels + "googlenet.onnx", &from_file, &err), graph::Status::kOk) << err;
  const std::string b = bytes_of(kModels + "googlenet.onnx");
  ASSERT_EQ(graph::model_parse_file("x", "x.onnx", b, &from_bytes, &err), graph::Status::kOk);
  EXPECT_EQ(from_file.nodes.size(), from_bytes.nodes.size());
  EXPECT_GT(from_file.nodes.size(), 100u);
  EXPECT_EQ(from_file.path, kModels + "googlenet.onnx");
  EXPECT_EQ(from_file.format, graph::Format::kOnnx);
}

TEST(ModelFile, ADirectoryIsReadAsItsSavedModel) {
  graph::Graph g;
  std::string err;
  const std::string dir = kModels + "tf_inception_block_savedmodel";
  ASSERT_EQ(model_load(dir, &g, &err), graph::Status::kOk) << err;
  EXPECT_EQ(g.format, graph::Format::kTfSavedModel);
  EXPECT_EQ(g.path, dir);  // what the user named, not the file inside
  graph::Graph slash;
  ASSERT_EQ(model_load(dir + "/", &slash, &err), graph::Status::kOk) << err;
  EXPECT_EQ(slash.nodes.size(), g.nodes.size());
  TempDir t;
  EXPECT_EQ(model_load(t.path, &g, &err), graph::Status::kIoError);
  EXPECT_NE(err.find(t.path + " is a directory without saved_model.pb"), std::string::npos) << err;
}

TEST(ModelFile, ASymlinkToAModelIsFollowed) {
  TempDir t;
  const std::string link = t.path + "/model.onnx";
  ASSERT_EQ(symlink((kModels + "squeezenet1_0.onnx").c_str(), link.c_str()), 0);
  graph::Graph g;
  std::string err;
  ASSERT_EQ(model_load(link, &g, &err), graph::Status::kOk) << err;
  EXPECT_EQ(g.path, link);
}

TEST(ModelFile, AFifoIsRefusedWithoutBlocking) {
  TempDir t;
  const std::string fifo = t.path + "/model.onnx";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  graph::Graph g;
  std::string err;
  // Opening a FIFO with no writer would block a plain open(): this returns.
  EXPECT_EQ(model_load(fifo, &g, &err), graph::Status::kIoError);
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
}

TEST(ModelFile, MissingEmptyAndTextProtobufAreErrorsNamingThePath) {
  TempDir t;
  graph::Graph g;
  std::string err;
  EXPECT_EQ(model_load(t.path + "/none.onnx", &g, &err), graph::Status::kIoError);
  EXPECT_NE(err.find(t.path + "/none.onnx"), std::string::npos) << err;
  std::ofstream(t.path + "/empty.onnx").close();
  EXPECT_EQ(model_load(t.path + "/empty.onnx", &g, &err), graph::Status::kBadFormat);
  EXPECT_NE(err.find("empty.onnx is empty"), std::string::npos) << err;
  std::ofstream(t.path + "/m.pbtxt") << "node { name: \"a\" }\n";
  EXPECT_EQ(model_load(t.path + "/m.pbtxt", &g, &err), graph::Status::kUnsupported);
  std::ofstream(t.path + "/junk.pb") << std::string(64, '\xee');
  EXPECT_NE(model_load(t.path + "/junk.pb", &g, &err), graph::Status::kOk);
  EXPECT_EQ(err.rfind(t.path + "/junk.pb: ", 0), 0u) << err;
}

}  // namespace
}  // namespace pw::files
