// hooks/creator: which library asked for a new thread, and who called it.
#pragma once

#include <string>

namespace pw::hooks {

// Called inside pthread_create with the hook's return address. Cheap for
// the usual callers (one lock-free object lookup); walks the stack (libgcc's
// unwinder, linked in: no loader calls) only when the immediate caller is a
// thread wrapper (libstdc++'s std::thread, libc's thrd_create).
std::string creator_of(const void* caller_pc);

}  // namespace pw::hooks
