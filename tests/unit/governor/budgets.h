// Budgets the governor tests plan on: described machines, as the governor sees them.
#pragma once

#include "governor/plan.h"

namespace pw::gov::test {

// sockets x cores x pus, numbered like hwloc's synthetic topologies: core k
// of the machine has PUs k*pus .. k*pus+pus-1.
inline BudgetView machine(int sockets, int cores, int pus) {
  BudgetView b;
  int pu = 0;
  for (int s = 0; s < sockets; ++s) {
    for (int c = 0; c < cores; ++c) {
      CoreSlot slot;
      slot.socket = s;
      for (int t = 0; t < pus; ++t) slot.pus.push_back(pu++);
      b.cores.push_back(slot);
    }
  }
  return b;
}

}  // namespace pw::gov::test
