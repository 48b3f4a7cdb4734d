// core/log: messages on stderr from inside the host process.
//
// Formats into a fixed stack buffer and writes with one write(2): never
// allocates, never takes a lock, never recurses into the hooks.
#pragma once

namespace pw::log {

enum Level { kError = 0, kWarning = 0, kInfo = 1, kDebug = 2, kTrace = 3 };

// The verbosity (PARWIDTH_VERBOSE); warnings print at every level.
void log_set_level(int level);
int log_level();

// "parwidth: warning: ..." (always printed, once per call).
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "parwidth[pid]: ..." when level <= the verbosity.
void info(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace pw::log
