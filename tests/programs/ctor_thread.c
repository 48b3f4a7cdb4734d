/* tests/programs/ctor_thread.c: dlopen()s ctor_thread_lib (RTLD_LOCAL) and
   prints how much of its constructor's work finished ("done 2").

     ctor_thread LIBRARY */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "ctor_thread: %s\n", dlerror());
    return 2;
  }
  int (*done)(void) = NULL;
  *(void**)&done = dlsym(h, "pw_ctor_done");
  if (!done) return 2;
  printf("done %d\n", done());
  return 0;
}
