// Format detection for model_parse / model_parse_file: pure, the bytes come from the caller
// (core/model_file reads model files).
#include <new>

#include "graph/readers.h"

namespace pw::graph {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

bool looks_like_json(std::string_view d) {
  for (char c : d) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

Status model_parse_as(std::string_view d, Format f, Graph* out, std::string* err) {
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
      return tf_functiondef_read(d, {}, out, err);
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
    Status st = model_parse_as(d, t, out, &e);
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

struct FileArgs {
  const std::string* path;
  const std::string* file;
  std::string_view data;
  Graph* out;
  std::string* err;
};

Status model_file_parse(void* p) {
  auto* a = static_cast<FileArgs*>(p);
  const std::string& file = *a->file;
  Format f = Format::kAuto;
  if (ends_with(file, "saved_model.pb")) {
    f = Format::kTfSavedModel;
  } else if (ends_with(file, ".onnx")) {
    f = Format::kOnnx;
  } else if (ends_with(file, ".json")) {
    f = Format::kJson;
  } else if (ends_with(file, ".fdef")) {  // one serialized FunctionDef: only when so named
    f = Format::kTfFunctionDef;
  } else if (ends_with(file, ".pbtxt")) {
    return fail(a->err, Status::kUnsupported,
                file + ": text protobuf is not supported; use the binary .pb");
  }
  if (a->data.empty()) return fail(a->err, Status::kBadFormat, file + " is empty");
  Graph g;
  Status s;
  if (f == Format::kAuto && ends_with(file, ".pb")) {
    // A frozen GraphDef, or a SavedModel under another name.
    std::string e;
    s = model_parse_as(a->data, Format::kTfGraphDef, &g, &e);
    if (s != Status::kOk) s = model_parse_as(a->data, Format::kTfSavedModel, &g, a->err);
    if (s != Status::kOk && a->err) *a->err = e;
  } else {
    s = model_parse_as(a->data, f, &g, a->err);
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
  const std::vector<std::string>* arg_handles = nullptr;  // function_parse only
};

Status parse(void* p) {
  auto* a = static_cast<ParseArgs*>(p);
  Graph g;
  Status s = a->arg_handles ? tf_functiondef_read(a->data, *a->arg_handles, &g, a->err)
                            : model_parse_as(a->data, a->format, &g, a->err);
  if (s == Status::kOk) *a->out = std::move(g);
  return s;
}

}  // namespace

Status model_parse_file(const std::string& path, const std::string& file, std::string_view data,
                        Graph* out, std::string* err) {
  FileArgs a{&path, &file, data, out, err};
  return guarded(err, model_file_parse, &a);
}

Status model_parse(const void* data, size_t size, Format format, Graph* out, std::string* err) {
  if (!data && size) return fail(err, Status::kBadFormat, "null buffer");
  ParseArgs a{std::string_view(static_cast<const char*>(data), size), format, out, err};
  return guarded(err, parse, &a);
}

Status function_parse(const void* data, size_t size, const std::vector<std::string>& arg_handles,
                      Graph* out, std::string* err) {
  if (!data && size) return fail(err, Status::kBadFormat, "null buffer");
  ParseArgs a{std::string_view(static_cast<const char*>(data), size), Format::kTfFunctionDef, out,
              err, &arg_handles};
  return guarded(err, parse, &a);
}

}  // namespace pw::graph
