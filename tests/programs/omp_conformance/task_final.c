/* task_final: final tasks and omp_in_final. */
#include "conf.h"
int main(void) {
  int in_final = -1, child_final = -1;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task final(1) shared(in_final, child_final)
      {in_final = omp_in_final();
#pragma omp task shared(child_final)
  child_final = omp_in_final();
}
#pragma omp taskwait
}
say("in_final", in_final);
say("child_final", child_final);
return 0;
}
