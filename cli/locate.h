// cli/locate: where libparwidth.so is, for the commands that preload it.
#pragma once

#include <string>

namespace pw::cli {

// `given` as it is (unchecked: the caller tests it) if not empty, else
// $PARWIDTH_LIB, else the one layout rule: the preload is
// PW_LIB_FROM_BIN/libparwidth.so relative to the directory of this program's
// real path (../lib/libparwidth.so: the build tree, `cmake --install`, the
// .deb and the wheel's package directory). The last two are resolved to a real
// path; "" if not readable.
std::string preload_library_find(const std::string& given);

// Where the layout rule puts the preload for this program, not resolved.
std::string default_preload_path();

// The directory of this program's real path (/proc/self/exe); "" if unreadable.
std::string program_dir();

// The calibration helper's path, beside this program (it is absent from a
// build without OpenMP); "" if this program's path is unreadable.
std::string calibration_helper_path();

}  // namespace pw::cli
