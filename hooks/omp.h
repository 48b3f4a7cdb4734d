// hooks/omp: shared by the OpenMP hooks (C++ and the libomp assembly stubs).
#pragma once

namespace pw::hooks {

// Applies the team cap to the calling thread before a parallel region starts.
void omp_before_region(const void* caller_pc);

}  // namespace pw::hooks
