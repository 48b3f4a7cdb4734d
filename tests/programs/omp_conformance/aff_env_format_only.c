/* aff_env_format_only: OMP_AFFINITY_FORMAT is read back. */
// env: OMP_AFFINITY_FORMAT=tn=%n
#include "conf.h"
int main(void) {
  char buf[64];
  omp_get_affinity_format(buf, sizeof buf);
  say_s("format", buf);
  return 0;
}
