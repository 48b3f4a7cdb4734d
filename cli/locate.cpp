// cli/locate: finding libparwidth.so relative to the running `parwidth`.
#include "cli/locate.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef PW_LIB_FROM_BIN
#define PW_LIB_FROM_BIN "../lib"
#endif

namespace pw::cli {
namespace {

// /proc/self/exe is the real path: a symlink to the command (a venv's bin/,
// /usr/local/bin) still finds the library beside the real file.
std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

std::string readable_real_path(const std::string& p) {
  char real[PATH_MAX];
  if (access(p.c_str(), R_OK) == 0 && realpath(p.c_str(), real)) return real;
  return "";
}

}  // namespace

std::string preload_library_find(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* e = getenv("PARWIDTH_LIB"); e && *e) return readable_real_path(e);
  return readable_real_path(default_preload_path());
}

std::string default_preload_path() {
  return self_dir() + "/" PW_LIB_FROM_BIN "/libparwidth.so";
}

}  // namespace pw::cli
