/* tests/programs/many_plugins.c: many plug-ins, each loaded RTLD_LOCAL with
   its own copy of libpw_sum_b.so (libgomp reached only through them), each
   running parallel regions, round by round.

     many_plugins ROUNDS LIB...    prints "plugins N rounds R teams T" */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int rounds = atoi(argv[1]);
  const int n = argc - 2;
  void (**sum)(int*, int*) = calloc((size_t)n, sizeof *sum);
  if (!sum) return 2;
  for (int i = 0; i < n; ++i) {
    void* h = dlopen(argv[i + 2], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "many_plugins: %s\n", dlerror());
      return 2;
    }
    *(void**)&sum[i] = dlsym(h, "pw_sum");
    if (!sum[i]) return 2;
  }
  int team = -1;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < n; ++i) {
      int t = 0, s = 0;
      sum[i](&t, &s);
      if (s != t * (t - 1) / 2 || (team >= 0 && t != team)) {
        fprintf(stderr, "many_plugins: plug-in %d: team %d, sum %d\n", i, t, s);
        return 1;
      }
      team = t;
    }
  printf("plugins %d rounds %d teams %d\n", n, rounds, team);
  free(sum);
  return 0;
}
