// hooks/abi: prototypes of the interposed names that no system header declares
// (the OpenMP runtimes' compiler-facing entry points), as the runtimes define them.
#pragma once

#include <pthread.h>
#include <spawn.h>
#include <stddef.h>

extern "C" {
// OpenMP API (omp.h is not included: libgomp's and libomp's headers differ).
void omp_set_num_threads(int n);
int omp_get_max_threads(void);

// libgomp's ABI (GCC's codegen for #pragma omp parallel); libomp implements it too.
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads);
unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                  unsigned flags);
void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count,
                            unsigned flags);
void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, long chunk,
                                             unsigned flags);
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned num_threads,
                                            long start, long end, long incr, long chunk,
                                            unsigned flags);
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, unsigned flags);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data,
                                                   unsigned num_threads, long start, long end,
                                                   long incr, unsigned flags);

// libomp's fork entry points (clang's codegen) are variadic: hooks/kmpc_x86_64.S
// defines them and forwards every register to the original unchanged.
struct ident;
void __kmpc_fork_call(struct ident* loc, int argc, void (*microtask)(int*, int*, ...), ...);
void __kmpc_fork_teams(struct ident* loc, int argc, void (*microtask)(int*, int*, ...), ...);

// examples/engine's C API (examples/engine/pwengine.h): the session constructor that
// hooks/engine.cpp interposes.
typedef struct pwe_session_options pwe_session_options;
typedef struct pwe_session pwe_session;
pwe_session* pwe_session_new(const void* model, size_t size, pwe_session_options* opts, char* err,
                             size_t errlen);
}
