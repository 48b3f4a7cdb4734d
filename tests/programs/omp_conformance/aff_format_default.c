/* aff_format_default: the default affinity format can be read back. */
#include "conf.h"
int main(void) {
  char buf[512];
  size_t n = omp_get_affinity_format(buf, sizeof buf);
  say("length_positive", n > 0);
  say("has_A", strstr(buf, "%A") != NULL || strstr(buf, "thread_affinity") != NULL);
  return 0;
}
