// core/log: fixed-buffer logging to stderr.
#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace pw::log {
namespace {

std::atomic<int> g_level{0};

void emit(bool warning, const char* fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void emit(bool warning, const char* fmt, va_list ap) {
  char buf[1024];
  int n = warning ? snprintf(buf, sizeof buf, "parwidth: warning: ")
                  : snprintf(buf, sizeof buf, "parwidth[%d]: ", static_cast<int>(getpid()));
  if (n < 0) return;
  if (n > static_cast<int>(sizeof buf) - 2) n = sizeof buf - 2;
  int m = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
  if (m < 0) return;
  n += m;
  if (n > static_cast<int>(sizeof buf) - 2) n = sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t r = write(STDERR_FILENO, buf, n);
  (void)r;
}

}  // namespace

void log_set_level(int level) {
  g_level.store(level, std::memory_order_relaxed);
}
int log_level() {
  return g_level.load(std::memory_order_relaxed);
}

void warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(true, fmt, ap);
  va_end(ap);
}

void info(int level, const char* fmt, ...) {
  if (level > log_level()) return;
  va_list ap;
  va_start(ap, fmt);
  emit(false, fmt, ap);
  va_end(ap);
}

}  // namespace pw::log
