// hooks/guard: the thread-local recursion guard every hook takes.
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
