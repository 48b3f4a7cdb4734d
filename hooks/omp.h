// hooks/omp: shared by the OpenMP hooks (C++ and the libomp assembly stubs).
#pragma once

namespace pw::hooks {

// Applies the team cap to the calling thread before a parallel region starts.
void omp_before_region(const void* caller_pc);

// At activation, before any OpenMP runtime binds threads itself: LLVM libomp
// takes its "full" CPU set from the first thread that initialises it, which
// may be a thread we pinned to one core, and then binds every thread (the
// main thread too) to that core. Unless the user chose an affinity policy,
// libomp's own binding is turned off (kmp_set_defaults, no environment
// change) and parwidth's pinning stands.
void omp_on_activate();

// True if a thread that the object at caller_pc creates belongs to an OpenMP
// runtime whose own binding stands: the user chose one (OMP_PROC_BIND,
// OMP_PLACES, GOMP_CPU_AFFINITY, KMP_AFFINITY; false included), or libomp keeps
// its own because the program reads thread affinity. parwidth does not pin
// such a thread; *why says so for the report.
bool omp_thread_left_to_runtime(const void* caller_pc, const char** why);

// A framework that parwidth governs through its own API (PyTorch's
// at::set_num_threads) also calls omp_set_num_threads, to pass its value on
// to each thread. Such a call is the user's explicit choice only if the user
// set the framework's count; otherwise it is the framework applying our plan
// or its default, and later cap changes (the monitor, the node's other
// processes) must still reach that thread. Returns false if the caller is
// not such a framework.
bool framework_sets_omp_threads(const void* caller_pc, bool* user_explicit);

}  // namespace pw::hooks
