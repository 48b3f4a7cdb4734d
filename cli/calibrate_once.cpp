// cli/calibrate_once: `parwidth run` calibrates once per machine and budget.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/calibrate.h"
#include "cli/locate.h"
#include "core/cache.h"

namespace pw::cli {

bool calibrate_if_missing(const planning::Planned& p, const std::string& dir, std::string* why) {
  why->clear();
  if (dir.empty()) return *why = "no cache directory (set XDG_CACHE_HOME or HOME)", false;
  if (calibration_stored(p, dir)) return true;
  // Without the helper (a build without OpenMP) there is nothing to run: the
  // built-in model plans, as documented, without a warning at every run.
  const std::string helper = calibration_helper_path();
  if (helper.empty() || access(helper.c_str(), X_OK) != 0) return false;
  if (!cache::dir_make(dir, why)) return false;
  // Ranks of one job started together calibrate once: the others wait here and
  // then find the calibration stored.
  const std::string lock = dir + "/calibrate.lock";
  const int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return *why = "cannot open " + lock + ": " + strerror(errno), false;
  while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  bool ok = calibration_stored(p, dir);
  if (!ok) {
    std::string path;
    ok = calibrate_budget(p, dir, true, &path, why);
  }
  close(fd);  // releases the lock
  return ok;
}

}  // namespace pw::cli
