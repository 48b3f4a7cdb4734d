// governor/node_share: which cores of the node a governed process takes when
// several governed processes that no launcher describes share them.
//
// Pure: the members (as the node registry lists them) in, this member's cores
// out. Every member computes the same division from the same list, so the
// shares are disjoint without any negotiation. No error states: a member with
// no cores, or a list without the member, yields the member's own cores.
#pragma once

#include <string>
#include <vector>

namespace pw::gov {

// One physical core, named by its first PU; `socket` is the socket's OS index.
struct NodeCore {
  int socket = 0;
  int cpu = 0;
};

// A governed process on the node and the cores its budget allows before the
// node is divided (affinity, cgroup, quota: each process has its own).
struct NodeMember {
  long pid = 0;
  unsigned long long start = 0;  // process start time (clock ticks since boot): arrival order
  std::vector<NodeCore> cores;
  // What `parwidth node` shows beside the division (not part of it): the
  // member's plan in force and the monitor's last verdict (-1: no monitor,
  // or an entry written before these were kept), and when it joined (Unix
  // seconds, 0: unknown).
  int pools = 0;
  int threads = 0;
  int oversubscribed = -1;
  long long joined = 0;
  // It serves requests: an event loop of it was seen waiting for them while
  // it holds a listening socket (a model server). Part of the division: see
  // node_share.
  bool serves = false;
};

struct NodeShare {
  std::vector<int> cpus;  // this member's cores (first PUs), socket-major
  int rank = 0;           // its place among the members it shares cores with (arrival order)
  int size = 1;           // members sharing at least one core with it, itself included
  // More members than cores somewhere: those cores are shared by all of their
  // members, each of which plans `cores_worth` cores' threads on them and
  // lets the kernel balance its threads over the whole region (pinning each
  // member to one core would give one of them a core and split another).
  bool overlap = false;
  int cores_worth = 0;  // the cores' worth of threads this member plans (cpus.size() if no overlap)
  // Every member sharing these cores serves requests: the cores are shared by
  // time, each member as wide as all of them (see node_share) ...
  bool time_shared = false;
  // ... except its OpenMP teams, which keep to the cores' worth a split would
  // give it (0: not time-shared). A team's threads meet at a barrier after
  // every parallel region, so a team as wide as the cores waits, region after
  // region, for the thread a neighbour's burst took the CPU from; one within
  // its split never does, and a server's other pools (ONNX Runtime's,
  // TensorFlow's) hand out work to whichever thread is running.
  int team_worth = 0;
  std::string note;  // one line for the report
};

// Members are ordered by (start, pid). The cores of the node fall into
// regions: cores usable by exactly the same set of members. Each region is
// split among its members into balanced contiguous groups in socket-major
// order, placed so that as few groups as possible span two sockets (the
// plan's pool placement); the earliest member takes the first group. When a
// region has fewer cores (n) than members (k), every member takes the whole
// region and counts n / k of a core's worth in it (overlap).
// Identical budgets (the common case) give the same split as a launcher's
// local rank/size; members whose budgets do not overlap keep all their cores.
//
// A region whose members all serve requests is not split: each takes all of
// its cores and plans their full worth. A server's demand comes in bursts,
// its neighbours' bursts seldom coincide, and a burst that finds the other
// servers quiet gets every core, where a split leaves a quiet server's cores
// idle while the busy one queues (its pools, sized to the region, wait
// passively between runs: governor/pools_wait, governor/pools_ort). A region
// with any member that does not serve (a batch job) is split as above: a batch
// job keeps its cores busy and would leave a time-shared server none.
NodeShare node_share(const std::vector<NodeMember>& members, size_t self);

// The share this member will have once `expected` members are on the node
// (PARWIDTH_NODE_EXPECT: a site's or a service manager's statement of how many
// governed processes the node holds), for the pools a framework makes once and
// cannot resize. The members not there yet are counted as later arrivals with
// this member's cores, so the share is the first of the division they will
// cause for the members present now: the same cores node_share gives this
// member when they come (with other budgets, the cores of this one's region).
// With as many members or more present, node_share's.
NodeShare node_share_expected(const std::vector<NodeMember>& members, size_t self, int expected);

}  // namespace pw::gov
