// runtime/state: the Runtime's storage, and the few reads every file makes of it.
#include "runtime/state.h"

#include <cstdlib>
#include <new>

namespace pw::rt {

Runtime* g = nullptr;
HookEntries g_hooks{};
// The Runtime lives here, constructed in place at load and never destroyed:
// threads may still run hooks while the process exits.
alignas(Runtime) unsigned char g_storage[sizeof(Runtime)];
ExecState g_exec;

Runtime* state_create() {
  g = new (g_storage) Runtime();
  return g;
}
thread_local int t_pool __attribute__((tls_model("initial-exec"))) = -1;

const char* env_lookup(const char* name) {
  return getenv(name);
}

bool selected() {
  return g && g->state.load(std::memory_order_relaxed) != kUnselected;
}
const opt::Options& options() {
  return g->opt;
}

pid_t own_pid() {
  return g ? g->pid.load(std::memory_order_relaxed) : 0;
}

void hooks_bind_exec() {
  if (g_hooks.exec_bind) g_hooks.exec_bind();
}

void hooks_register(const HookEntries& entries) {
  g_hooks = entries;
}

}  // namespace pw::rt
