// cli/locate: finding libparwidth.so relative to the running `parwidth`.
#include "cli/locate.h"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

namespace pw::cli {
namespace {

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

}  // namespace

std::string find_preload_library(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* e = getenv("PARWIDTH_LIB")) return e;
  const std::string dir = self_dir();
  for (const char* rel :
       {"/../lib/libparwidth.so", "/libparwidth.so", "/../lib64/libparwidth.so"}) {
    const std::string p = dir + rel;
    char real[PATH_MAX];
    if (access(p.c_str(), R_OK) == 0 && realpath(p.c_str(), real)) return real;
  }
  return "";
}

}  // namespace pw::cli
