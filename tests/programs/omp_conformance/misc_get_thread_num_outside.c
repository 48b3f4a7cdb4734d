/* misc_get_thread_num_outside: thread number and team size outside regions. */
#include "conf.h"
int main(void) {
  say("thread_num", omp_get_thread_num());
  say("num_threads", omp_get_num_threads());
  say("team_num", omp_get_team_num());
  say("num_teams", omp_get_num_teams());
  return 0;
}
