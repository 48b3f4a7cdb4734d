// hooks/guard: the thread-local recursion guard a hook holds while it is in
// parwidth's own code. Every hook that enters the runtime takes one (the
// Python entry points through the functions they call), and releases it
// before the original runs wherever the original may create threads (they
// are the host's, and governed) or never return (an exec in a vfork child).
#pragma once

namespace pw::hooks {

// True while this thread is inside parwidth: a hook reached again from our
// own code (activation creating nothing, a dlopen'ed library calling back)
// passes straight through.
extern __thread bool t_inside __attribute__((tls_model("initial-exec")));

class Guard {
 public:
  Guard() : entered_(!t_inside) { t_inside = true; }
  ~Guard() {
    if (entered_) t_inside = false;
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  // False if this thread was already inside parwidth.
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace pw::hooks
