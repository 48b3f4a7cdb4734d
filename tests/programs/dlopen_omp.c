/* tests/programs/dlopen_omp.c: a program without OpenMP that dlopen()s
   (RTLD_LOCAL) a library built with -fopenmp and runs its parallel regions:
   the OpenMP runtime is reachable only from that library, as with a Python
   extension or a wheel that bundles its own libgomp.

     dlopen_omp LIBRARY [omp_teams options...] */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dlopen_omp LIBRARY [options]\n");
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen_omp: %s\n", dlerror());
    return 2;
  }
  int (*run)(int, char**) = NULL;
  *(void**)&run = dlsym(h, "omp_teams_main");
  if (!run) {
    fprintf(stderr, "dlopen_omp: %s\n", dlerror());
    return 2;
  }
  /* The library sees argv[1] as its program name. */
  return run(argc - 1, argv + 1);
}
