/* tests/programs/omp_sum_lib.c: a plug-in with one parallel region, built
   twice (libpw_sum_a.so with clang against LLVM libomp, libpw_sum_b.so with
   gcc against libgomp) for dlclose_omp. */
#include <omp.h>

/* The team's size (3, as asked) and the sum of its thread numbers, as its
   own runtime sees them. */
__attribute__((visibility("default"))) void pw_sum(int* threads, int* sum) {
  int n = 0, s = 0;
  /* Through parwidth's hook of omp_set_num_threads: it must reach this
     plug-in's own runtime, or the region ignores it. */
  omp_set_num_threads(3);
#pragma omp parallel reduction(+ : n, s)
  {
    n += 1;
    s += omp_get_thread_num();
  }
  *threads = n;
  *sum = s;
}
