/* icv_dynamic_default: dynamic adjustment is off by default. */
#include "conf.h"
int main(void) {
  say("dynamic", omp_get_dynamic());
  omp_set_dynamic(1);
  say("dynamic_set", omp_get_dynamic());
  omp_set_dynamic(0);
  say("dynamic_unset", omp_get_dynamic());
  return 0;
}
