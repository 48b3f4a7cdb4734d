// Format detection and file reading for model_load / model_parse.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <new>

#include "graph/readers.h"

namespace pw::graph {
namespace {

constexpr uint64_t kMaxFileBytes = uint64_t{2} << 30;  // protobuf's own 2 GiB limit

bool ends_with(const std::string& s, const char* suffix) {
  std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

Status read_file(const std::string& path, std::string* data, std::string* err) {
  // O_NONBLOCK: opening a FIFO must not block (it is refused below).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(err, Status::kIoError, "cannot open " + path);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail(err, Status::kIoError, path + " is not a regular file");
  }
  FILE* f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return fail(err, Status::kIoError, "cannot open " + path);
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    std::fclose(f);
    return fail(err, Status::kTooLarge, path + " is larger than 2 GiB");
  }
  data->resize(static_cast<size_t>(st.st_size));
  size_t got = data->empty() ? 0 : std::fread(&(*data)[0], 1, data->size(), f);
  std::fclose(f);
  if (got != data->size()) return fail(err, Status::kIoError, "short read from " + path);
  return Status::kOk;
}

bool looks_like_json(std::string_view d) {
  for (char c : d) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

Status parse_as(std::string_view d, Format f, Graph* out, std::string* err) {
  switch (f) {
    case Format::kOnnx:
      return onnx_read(d, out, err);
    case Format::kTfGraphDef:
      return tf_graphdef_read(d, out, err);
    case Format::kTfSavedModel:
      return tf_savedmodel_read(d, out, err);
    case Format::kJson:
      return json_read(d, out, err);
    case Format::kTfFunctionDef:
      return tf_functiondef_read(d, out, err);
    case Format::kAuto:
      break;
  }
  if (d.empty()) return fail(err, Status::kBadFormat, "empty input");
  if (looks_like_json(d)) return json_read(d, out, err);
  // Binary protobuf carries no magic: try each reader, keep the first that finds a graph.
  // The first error is the one reported (the ONNX reader's, for a file of no format).
  std::string first;
  Status first_st = Status::kOk;
  for (Format t : {Format::kOnnx, Format::kTfSavedModel, Format::kTfGraphDef}) {
    std::string e;
    Status st = parse_as(d, t, out, &e);
    if (st == Status::kOk) return st;
    if (st == Status::kNoMemory || st == Status::kTooLarge) return fail(err, st, e);
    if (first_st == Status::kOk) first_st = st, first = e;
  }
  return fail(err, first_st, "not a model graph (" + first + ")");
}

Status guarded(std::string* err, Status (*fn)(void*), void* arg) {
  try {
    return fn(arg);
  } catch (const std::bad_alloc&) {
    return fail(err, Status::kNoMemory, "out of memory reading the model");
  } catch (...) {
    return fail(err, Status::kInternal, "internal error reading the model");
  }
}

struct LoadArgs {
  const std::string* path;
  Graph* out;
  std::string* err;
};

Status load(void* p) {
  auto* a = static_cast<LoadArgs*>(p);
  std::string path = *a->path;
  Format f = Format::kAuto;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return fail(a->err, Status::kIoError, "cannot open " + path);
  if (S_ISDIR(st.st_mode)) {
    std::string pb = path + (ends_with(path, "/") ? "" : "/") + "saved_model.pb";
    if (stat(pb.c_str(), &st) != 0)
      return fail(a->err, Status::kIoError, path + " is a directory without saved_model.pb");
    path = pb;
    f = Format::kTfSavedModel;
  } else if (ends_with(path, "saved_model.pb")) {
    f = Format::kTfSavedModel;
  } else if (ends_with(path, ".onnx")) {
    f = Format::kOnnx;
  } else if (ends_with(path, ".json")) {
    f = Format::kJson;
  } else if (ends_with(path, ".pbtxt")) {
    return fail(a->err, Status::kUnsupported,
                path + ": text protobuf is not supported; use the binary .pb");
  }
  std::string data;
  Status s = read_file(path, &data, a->err);
  if (s != Status::kOk) return s;
  if (data.empty()) return fail(a->err, Status::kBadFormat, path + " is empty");
  Graph g;
  g.path = *a->path;
  if (f == Format::kAuto && ends_with(path, ".pb")) {
    // A frozen GraphDef, or a SavedModel under another name.
    std::string e;
    s = parse_as(data, Format::kTfGraphDef, &g, &e);
    if (s != Status::kOk) s = parse_as(data, Format::kTfSavedModel, &g, a->err);
    if (s != Status::kOk && a->err) *a->err = e;
  } else {
    s = parse_as(data, f, &g, a->err);
  }
  if (s != Status::kOk) {
    if (a->err) *a->err = *a->path + ": " + *a->err;
    return s;
  }
  g.path = *a->path;
  for (Graph& sub : g.subgraphs) sub.path = *a->path;
  *a->out = std::move(g);
  return Status::kOk;
}

struct ParseArgs {
  std::string_view data;
  Format format;
  Graph* out;
  std::string* err;
};

Status parse(void* p) {
  auto* a = static_cast<ParseArgs*>(p);
  Graph g;
  Status s = parse_as(a->data, a->format, &g, a->err);
  if (s == Status::kOk) *a->out = std::move(g);
  return s;
}

}  // namespace

Status model_load(const std::string& path, Graph* out, std::string* err) {
  LoadArgs a{&path, out, err};
  return guarded(err, load, &a);
}

Status model_parse(const void* data, size_t size, Format format, Graph* out, std::string* err) {
  if (!data && size) return fail(err, Status::kBadFormat, "null buffer");
  ParseArgs a{std::string_view(static_cast<const char*>(data), size), format, out, err};
  return guarded(err, parse, &a);
}

}  // namespace pw::graph
