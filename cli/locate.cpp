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
  const std::string dir = program_dir();
  return (dir.empty() ? std::string(".") : dir) + "/" PW_LIB_FROM_BIN "/libparwidth.so";
}

// /proc/self/exe is the real path: a symlink to the command (a venv's bin/,
// /usr/local/bin) still finds the library and the helper beside the real file.
std::string program_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

std::string calibration_helper_path() {
  const std::string dir = program_dir();
  return dir.empty() ? "" : dir + "/parwidth-calibrate";
}

}  // namespace pw::cli
