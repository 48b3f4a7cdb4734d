/* aff_capture_size: capture returns the full length even when truncating. */
#include "conf.h"
int main(void) {
  char small[4];
  size_t n = omp_capture_affinity(small, sizeof small, "level %L of %L");
  say("length", (long)n);
  say_s("truncated", small);
  return 0;
}
