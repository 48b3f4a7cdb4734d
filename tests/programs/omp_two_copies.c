/* tests/programs/omp_two_copies.c: two copies of libgomp in one process, as a
   Python program has them after `import torch` (torch's libgomp.so.1 in the
   global scope) and `import xgboost` (its own libgomp-<hash>.so.1, loaded
   RTLD_LOCAL beside it). The loader binds the second library's OpenMP calls
   to the first copy (the global scope comes first); a region run in one copy
   whose thread numbers come from the other sees every thread as thread 0.

     omp_two_copies GLOBAL_LIB COPY_LIB

   GLOBAL_LIB (needs libgomp.so.1) is loaded RTLD_GLOBAL, then COPY_LIB
   (libomp_copy_lib.so, needing libgomp-pwcopy.so.1) RTLD_LOCAL. Prints
   "team N ids A B ..." for a region of 2 threads: each thread's number seen
   once, "ids 1 2" (thread 0 counts 1, thread 1 counts 2). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: omp_two_copies GLOBAL_LIB COPY_LIB\n");
    return 2;
  }
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "omp_two_copies: %s\n", dlerror());
    return 2;
  }
  void* h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "omp_two_copies: %s\n", dlerror());
    return 2;
  }
  int (*region)(int, int*) = NULL;
  *(void**)&region = dlsym(h, "copy_region");
  if (!region) {
    fprintf(stderr, "omp_two_copies: %s\n", dlerror());
    return 2;
  }
  int ids[2] = {0, 0};
  const int team = region(2, ids);
  printf("team %d ids %d %d\n", team, ids[0], ids[1]);
  return 0;
}
