/* tests/programs/omp_copy_lib.c: a library built against its own copy of libgomp
   (libgomp-pwcopy.so.1, as a wheel bundles libgomp-<hash>.so.1), for
   omp_two_copies. Runs one parallel region of `n` threads and writes each
   thread's omp_get_thread_num() into ids[]. */
#include <omp.h>

__attribute__((visibility("default"))) int copy_region(int n, int* ids) {
  int team = 0;
#pragma omp parallel num_threads(n)
  {
    ids[omp_get_thread_num() < n ? omp_get_thread_num() : 0] += 1 + omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}
