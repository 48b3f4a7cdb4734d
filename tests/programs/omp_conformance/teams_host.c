/* teams_host: a host teams region before any parallel region (item 18). */
#include "conf.h"
int main(void) {
  int nteams = 0, ids[8] = {0};
#pragma omp teams num_teams(2)
  {
    ids[omp_get_team_num()] = 1;
    if (omp_get_team_num() == 0) nteams = omp_get_num_teams();
  }
  say("num_teams", nteams);
  say_each("ran", ids, nteams);
  return 0;
}
