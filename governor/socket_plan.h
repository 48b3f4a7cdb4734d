// governor/socket_plan: plans for budgets of several sockets, and for SMT
// siblings where the user asked for them (PARWIDTH_SMT).
//
// A team whose threads lie on two sockets pays for it: remote memory, a
// barrier across the interconnect (the paper measured two sockets speeding
// ResNet-50 up only 1.43x; Intel's launcher and OpenVINO split per socket).
// So a team that fits in a socket is placed inside one, and the plan spans
// sockets only where the model predicts the fastest spanning candidate at
// least kSpanMargin faster than the fastest per-socket one. SMT siblings are
// slots only with PARWIDTH_SMT, and then a sibling adds smt_gain of a core,
// not a core.
//
// Pure: values in, values out.
#pragma once

#include <string>
#include <vector>

#include "governor/machine_model.h"
#include "governor/plan.h"
#include "governor/schedule.h"

namespace pw::gov {

struct SocketShape {
  int sockets = 1;           // sockets with slots of the budget on them
  int slots_per_socket = 1;  // slots on the smallest of them
  int pus_per_core = 1;      // slots per physical core: > 1 only with smt
};

// The shape of a budget's slots (cores, or PUs with smt).
SocketShape socket_shape(const BudgetView& b, bool smt);

// The model for a plan over SMT siblings, pus_per_core slots on each of
// m.cores cores (slots in core-major order, as plan_for lays them out): a
// team of t slots on c = ceil(t / pus_per_core) cores runs at c cores'
// speed plus smt_gain of a core per extra sibling; cores = m.cores x
// pus_per_core. pus_per_core <= 1: m.
MachineModel model_smt(const MachineModel& m, int pus_per_core);

// The model for one layout of the plan's pools over sockets of
// slots_per_socket slots each, m.cores slots in all:
//   per socket (spanning = false): the pools on sockets_used sockets and no
//     team across two: the shared cores are sockets_used x slots_per_socket,
//     teams beyond them oversubscribed as in m (m's times at the same
//     relative oversubscription);
//   spanning: every slot; a team larger than a socket runs span_factor
//     times slower on two sockets (1 + (span_factor - 1) x 2 (k - 1) / k on
//     k: the share of its memory that is remote) and pays span_region_s more
//     per region, unless the times were measured so (a calibration on these
//     sockets: span_measured).
// Either way a team moves memory at no more than one socket's roofline
// (socket_bytes_per_s, else 8 x bytes_per_s): a pool's tensors are
// first touched by its master, on one socket; and operators running at once
// on one socket share it (sockets_used, simulate).
MachineModel model_placed(const MachineModel& m, int slots_per_socket, int sockets_used,
                          bool spanning);

// Whether pools x threads given by the user or a measurement (or the width
// rule) are placed per socket: on several sockets, teams that fit one
// (threads <= slots_per_socket) and pools that divide evenly among
// min(pools, sockets) sockets; the layout the model's per-socket candidates
// have, so a measured grid cell is replayed as it was measured.
bool per_socket_fits(const SocketShape& shape, int pools, int threads);

// The spanning candidate must be predicted this much faster to be chosen.
inline constexpr double kSpanMargin = 0.10;

struct SocketChoice {
  std::vector<Candidate> candidates;  // per socket and spanning (Candidate::spans)
  int chosen = -1;                    // -1: no prediction
  int best_socket = -1;               // the fastest per-socket candidate, -1 none
  int best_span = -1;                 // the fastest spanning one, -1 none
  std::string why;                    // one line: the choice between them
};

// Candidates on a budget of several sockets (with one, the candidates of
// candidates_predict): per socket, `pools` pools on min(pools, sockets)
// sockets, evenly (pools a multiple of them), each team within its socket
// (threads <= slots_per_socket) and a socket's teams at most 2 x its slots;
// spanning, teams larger than a socket with pools x threads <= 2 x slots.
// pools <= max_pools and the graph's operators. The chosen one is
// candidate_choose's among the per-socket candidates, unless
// candidate_choose's among the spanning ones is kSpanMargin faster.
SocketChoice socket_choose(const CostGraph& g, const SocketShape& shape, int max_pools,
                           const MachineModel& m);

}  // namespace pw::gov
