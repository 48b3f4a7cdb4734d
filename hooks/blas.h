// hooks/blas: the thread pools that BLAS libraries keep beside OpenMP's.
#pragma once

#include <vector>

#include "runtime/api.h"

namespace pw::hooks {

// Finds the BLAS libraries loaded since the last sweep (OpenBLAS under any
// symbol prefix, MKL's mkl_rt, BLIS) and caps each one's thread count at the
// plan's threads per pool, unless the user sized it (environment, or the
// library's own set call seen by our hook); PARWIDTH_OVERRIDE=1 replaces the
// user's value. Each library found is one entry of the report's `pools`.
//
// Call it only where no library's constructor can be running on this thread
// (after an import, from the main program's own code, after torch's init):
// a library must not be called before its own initialisation is done. Holds
// the hooks' guard only while it walks the loaded objects, not while it calls
// a library: growing a pool creates threads that the pthread_create hook must
// see. Cheap when nothing was loaded since the last sweep.
void blas_sweep(const char* trigger);

// The plan in force changed (the node was divided again): every pool that
// parwidth sized follows it, never above the library's own size; pools the
// user sized are left alone. Called on the monitor thread, as threadpoolctl
// calls these setters from any thread; skipped while a sweep runs.
void blas_follow(int threads);

// Every pool found so far with its count as the library's own getter reports it.
void blas_values(std::vector<rt::RuntimeValue>* out);

// Whether the program set the thread count of the library that defines `fn`
// through one of its set calls (seen by the hooks below).
bool blas_user_called(const void* fn);

}  // namespace pw::hooks
