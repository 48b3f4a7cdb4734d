// hooks/register: hands the runtime the hook entry points it calls, so that
// preload/ never includes or calls into hooks/.
#include "hooks/blas.h"
#include "hooks/omp.h"
#include "hooks/real.h"
#include "preload/runtime.h"

namespace {

// Priority: before preload/main.cpp's constructor (and anything that could
// activate the runtime). Every original is bound here, while the loader's
// lock is ours anyway: a hook never calls dlsym later.
__attribute__((constructor(101))) void hooks_register_at_load() {
  pw::hooks::bind_all();
  pw::rt::hooks_register({pw::hooks::omp_on_activate, pw::hooks::real_pthread_create,
                          pw::hooks::bind_exec, pw::hooks::real_lookups, pw::hooks::blas_follow});
}

}  // namespace
