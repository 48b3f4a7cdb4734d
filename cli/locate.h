// cli/locate: where libparwidth.so is, for the commands that preload it.
#pragma once

#include <string>

namespace pw::cli {

// `given` if not empty, else $PARWIDTH_LIB, else libparwidth.so next to this
// program (../lib, the same directory, ../lib64), resolved; "" if none is readable.
std::string find_preload_library(const std::string& given);

}  // namespace pw::cli
