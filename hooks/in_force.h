// hooks/in_force: what the runtimes themselves report of their thread counts.
#pragma once

#include <vector>

#include "runtime/api.h"

namespace pw::hooks {

// Each OpenMP runtime's omp_get_max_threads() on the calling thread, and each
// BLAS pool's count as its own getter gives it. Reads only what is safe at exit
// (no framework's code runs); no loader call but dl_iterate_phdr.
void runtime_values_read(std::vector<rt::RuntimeValue>* out);

}  // namespace pw::hooks
