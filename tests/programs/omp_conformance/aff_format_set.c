/* aff_format_set: omp_set_affinity_format round trip. */
#include "conf.h"
int main(void) {
  char buf[128];
  omp_set_affinity_format("L%L n%n N%N");
  omp_get_affinity_format(buf, sizeof buf);
  say_s("format", buf);
  return 0;
}
