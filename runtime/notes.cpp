// runtime/notes: what the report says was applied or left alone, and the warnings.
#include <time.h>

#include "core/log.h"
#include "runtime/state.h"

namespace pw::rt {

void framework_note(const std::string& name, const std::string& setting, const std::string& value,
                    bool applied, const std::string& why) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::lock_guard<std::mutex> lock(g->mu);
  g->frameworks.push_back({name, setting, value, applied, why,
                           static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000});
}

void pool_note(const PoolNote& n) {
  std::lock_guard<std::mutex> lock(g->mu);
  g->pools.push_back(n);
}

void fail_open_note(const char* key, const char* why) noexcept {
  static const char kAside[] = "parwidth stepped aside and the host went on as it asked";
  try {
    if (g) {
      warn_once(std::string("fail-open ") + key, std::string(key) + ": " + why + "; " + kAside);
      return;
    }
  } catch (...) {
    // Out of memory: printed from a fixed buffer below, not kept.
    log::warn("%s: %s; %s (not kept for the report: out of memory)", key, why, kAside);
    return;
  }
  log::warn("%s: %s; %s", key, why, kAside);
}

void warn_once(const std::string& key, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(g->mu);
    for (const std::string& k : g->warned_keys)
      if (k == key) return;
    g->warned_keys.push_back(key);
    g->warnings.push_back(message);
  }
  log::warn("%s", message.c_str());
}

}  // namespace pw::rt
