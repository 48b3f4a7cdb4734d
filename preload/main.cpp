// preload/main: the LD_PRELOAD entry — constructor, destructor, fork handlers.
#include <pthread.h>

#include "runtime/api.h"

namespace {

void fork_prepare() {
  pw::rt::on_fork_prepare();
}
void fork_parent() {
  pw::rt::on_fork_parent();
}
void fork_child() {
  pw::rt::on_fork_child();
}

__attribute__((constructor)) void parwidth_load() {
  try {
    pw::rt::on_load();
    if (pw::rt::selected()) {
      pthread_atfork(fork_prepare, fork_parent, fork_child);
      pw::rt::hooks_bind_exec();
    }
  } catch (...) {
    // Out of memory while reading options: stay out of the way, and say so.
    pw::rt::fail_open_note("load", "parwidth could not start (out of memory); ungoverned");
  }
}

__attribute__((destructor)) void parwidth_unload() {
  try {
    pw::rt::on_exit();
  } catch (...) {
    pw::rt::fail_open_note("exit", "the work at exit (the report) stopped part way");
  }
}

}  // namespace
