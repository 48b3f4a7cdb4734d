// hooks/tf_handles: functions' handle data between their making and their adding.
#include "hooks/tf_handles.h"

#include <mutex>
#include <utility>

namespace pw::hooks::tf {
namespace {

// Python adds each function right after making it; the bound keeps a program that makes
// functions it never adds from growing the list.
constexpr size_t kMaxWaiting = 64;

struct Waiting {
  const void* fn;
  std::vector<std::string> handles;
};

std::mutex g_mu;
// A heap object never destroyed: hooks may run while the process exits.
std::vector<Waiting>& waiting() {
  static auto* v = new std::vector<Waiting>();
  return *v;
}

}  // namespace

void handles_remember(const void* fn, std::vector<std::string> handles) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Waiting>& w = waiting();
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i].fn == fn) w.erase(w.begin() + static_cast<long>(i)), --i;
  if (w.size() >= kMaxWaiting) w.erase(w.begin());
  w.push_back({fn, std::move(handles)});
}

std::vector<std::string> handles_take(const void* fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Waiting>& w = waiting();
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].fn != fn) continue;
    std::vector<std::string> h = std::move(w[i].handles);
    w.erase(w.begin() + static_cast<long>(i));
    return h;
  }
  return {};
}

}  // namespace pw::hooks::tf
