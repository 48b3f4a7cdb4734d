// hooks/register: hands the runtime the hook entry points it calls, so that
// runtime/ never includes or calls into hooks/.
#include "hooks/blas.h"
#include "hooks/in_force.h"
#include "hooks/omp.h"
#include "hooks/real.h"
#include "hooks/slots.h"
#include "runtime/api.h"

namespace {

// Priority: before preload/main.cpp's constructor (and anything that could
// activate the runtime). Every original in bind_list.h is bound here, while
// the loader's lock is ours anyway. A hook never calls dlsym later: an
// original that only an RTLD_LOCAL library defines is found per calling
// object by reading the loaded objects' symbol tables (hooks/real.h).
__attribute__((constructor(101))) void hooks_register_at_load() {
  pw::hooks::bind_all();
  // The monitor's threads are parwidth's own: made with the original, not governed.
  constexpr pw::counters::ThreadCreateFn (*thread_create)() = [] {
    return static_cast<pw::counters::ThreadCreateFn>(PW_REAL_AT(pthread_create, nullptr));
  };
  pw::rt::hooks_register({pw::hooks::omp_on_activate, thread_create, pw::hooks::bind_exec,
                          pw::hooks::real_lookups, pw::hooks::blas_follow,
                          pw::hooks::runtime_values_read});
}

}  // namespace
