/* tests/programs/dlclose_omp.c: a plug-in built against one OpenMP runtime
   is loaded (RTLD_LOCAL), used and closed; then a plug-in built against the
   other is loaded, usually into the same link_map address. Each plug-in's
   regions must run on its own runtime: a team of n threads numbered 0..n-1.

     dlclose_omp LIB_A LIB_B    prints "A n sum" and "B n sum" per round */
#include <dlfcn.h>
#include <stdio.h>

static int run(const char* path, const char* tag, int keep) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlclose_omp: %s\n", dlerror());
    return 2;
  }
  void (*sum)(int*, int*) = NULL;
  *(void**)&sum = dlsym(h, "pw_sum");
  if (!sum) return 2;
  int n = 0, s = 0;
  sum(&n, &s);
  printf("%s %d %d\n", tag, n, s);
  fflush(stdout);
  if (!keep) dlclose(h);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  /* LLVM's libomp stays loaded after its plug-in closes (NODELETE); libgomp
     does not, so B is used last and kept open. */
  for (int round = 0; round < 3; ++round)
    if (run(argv[1], "A", 0) != 0) return 2;
  return run(argv[2], "B", 1);
}
