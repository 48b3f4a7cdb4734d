// core/model_file: the I/O half of reading a model (see model_file.h).
#include "core/model_file.h"

#include <sys/stat.h>

#include <cstdint>
#include <new>

#include "core/cache.h"

namespace pw::files {

namespace {

constexpr size_t kMaxModelBytes = size_t{2} << 30;  // protobuf's own 2 GiB limit

graph::Status fail(std::string* err, graph::Status s, const std::string& msg) {
  if (err) *err = msg;
  return s;
}

}  // namespace

graph::Status model_load(const std::string& path, graph::Graph* out, std::string* err) {
  try {
    std::string file = path;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
      return fail(err, graph::Status::kIoError, "cannot open " + path);
    if (S_ISDIR(st.st_mode)) {
      file = path + (!path.empty() && path.back() == '/' ? "" : "/") + "saved_model.pb";
      if (stat(file.c_str(), &st) != 0)
        return fail(err, graph::Status::kIoError, path + " is a directory without saved_model.pb");
    }
    if (!S_ISREG(st.st_mode))
      return fail(err, graph::Status::kIoError, file + " is not a regular file");
    if (static_cast<uint64_t>(st.st_size) > kMaxModelBytes)
      return fail(err, graph::Status::kTooLarge, file + " is larger than 2 GiB");
    std::string data, why;
    if (!cache::file_read_capped(file, kMaxModelBytes, &data, &why, cache::Links::kFollow)) {
      if (why == "out of memory")
        return fail(err, graph::Status::kNoMemory, "out of memory reading " + file);
      return fail(err, graph::Status::kIoError, "cannot read " + file + " (" + why + ")");
    }
    return graph::model_parse_file(path, file, data, out, err);
  } catch (const std::bad_alloc&) {
    return fail(err, graph::Status::kNoMemory, "out of memory reading the model");
  }
}

}  // namespace pw::files
