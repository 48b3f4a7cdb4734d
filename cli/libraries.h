// cli/libraries: the optional libraries the preload dlopens, and whether this
// machine has them (for `parwidth topo`).
#pragma once

#include <string>
#include <vector>

namespace pw::cli {

struct OptionalLibrary {
  const char* name;     // "hwloc"
  const char* soname;   // what the preload dlopens: "libhwloc.so.15"
  const char* package;  // the Debian package that ships it (the .deb's Recommends)
  const char* use;      // what parwidth does with it, and without it
  bool found = false;
  std::string path;  // where the loader found it, or why not
};

// Tries to dlopen each by the soname the preload opens (RTLD_LAZY | RTLD_LOCAL,
// closed again; the preload binds RTLD_NOW), calling none of its functions.
std::vector<OptionalLibrary> optional_libraries_probe();

}  // namespace pw::cli
