// cli/measure: timed runs of a command through the preload.
#include "cli/measure.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/child.h"
#include "cli/locate.h"

namespace pw::cli {

bool run_once(char** cmd, const RunSpec& spec, const std::string& lib, int log_fd, std::string* out,
              double* seconds, std::string* why) {
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  auto exec = [&] {
    unsetenv("PARWIDTH_POOLS");
    unsetenv("PARWIDTH_INTRA");
    if (spec.preload) {
      std::string pre = lib;
      if (const char* old = getenv("LD_PRELOAD"); old && *old) pre += std::string(":") + old;
      setenv("LD_PRELOAD", pre.c_str(), 1);
      if (spec.pools > 0) setenv("PARWIDTH_POOLS", std::to_string(spec.pools).c_str(), 1);
      if (spec.threads > 0) setenv("PARWIDTH_INTRA", std::to_string(spec.threads).c_str(), 1);
      if (!spec.report.empty()) setenv("PARWIDTH_REPORT", spec.report.c_str(), 1);
      // Each configuration is measured as given: other governed processes on the node
      // (the node registry) would otherwise shrink its budget and clamp its pools.
      setenv("PARWIDTH_NODE", "off", 0);
      for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
    }
    execvp(cmd[0], cmd);
    fprintf(stderr, "parwidth: cannot run '%s': %s\n", cmd[0], strerror(errno));
  };
  if (!child_output(exec, log_fd, SIZE_MAX, out, &status, why)) return false;
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (log_fd >= 0 && !out->empty()) {
    if (write(log_fd, out->data(), out->size()) < 0) {
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  *why = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                           : "killed by signal " + std::to_string(WTERMSIG(status));
  return false;
}

bool Metric::parse(const std::string& pattern, std::string* err) {
  pattern_ = pattern;
  if (pattern.empty()) return true;
  try {
    re_ = std::regex(pattern);
  } catch (const std::regex_error& e) {
    *err = std::string("--metric: bad regular expression: ") + e.what();
    return false;
  }
  if (re_.mark_count() < 1) {
    *err = "--metric needs one capture group, e.g. 'time: ([0-9.]+)'";
    return false;
  }
  return true;
}

bool Metric::value(const std::string& out, double seconds, double* v) const {
  if (wall()) {
    *v = seconds;
    return true;
  }
  std::smatch m;
  if (!std::regex_search(out, m, re_)) return false;
  *v = strtod(m[1].str().c_str(), nullptr);
  return true;
}

int command_scan(const char* verb, int argc, char** argv, std::vector<Option> own,
                 void (*usage)(FILE*), Command* out) {
  std::string pattern, lib;
  own.push_back(flag("--json", &out->json));
  own.push_back(text("--metric", &pattern));
  own.push_back(text("--lib", &lib));
  const std::string who = std::string("parwidth ") + verb;
  int first = argc;
  if (const int rc = options_scan(who.c_str(), argc, argv, own, Ends::kAtDashes, usage, &first);
      rc >= 0)
    return rc;
  if (first >= argc) {
    fprintf(stderr, "%s: error: no command given (%s [options] -- CMD)\n", who.c_str(),
            who.c_str());
    return 2;
  }
  out->cmd = argv + first;
  if (std::string e; !out->metric.parse(pattern, &e)) {
    fprintf(stderr, "%s: error: %s\n", who.c_str(), e.c_str());
    return 2;
  }
  out->so = preload_library_find(lib);
  if (out->so.empty() || access(out->so.c_str(), R_OK) != 0) {
    fprintf(stderr, "%s: error: cannot find libparwidth.so (set --lib or PARWIDTH_LIB)\n",
            who.c_str());
    return 2;
  }
  return -1;
}

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

}  // namespace pw::cli
