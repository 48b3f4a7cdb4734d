// governor/membership: whether a process takes a share of the node right now.
//
// A process counts in the node registry only while it runs parallel work: its
// pool threads or OpenMP teams have run and it keeps CPUs busy. A launcher
// (the parent of ranks a launcher describes) leaves at once and never joins
// again: its ranks divide the node themselves. A driver waiting for its child
// or any idle process gives its share back after a while, and takes one again
// as soon as its work resumes.
//
// How long "a while" is follows what each leave and join costs: two
// re-divisions of the node for every member, and for a framework that sized
// its pools once (an ONNX Runtime or TensorFlow session) pools of the wrong
// size or a rebuild. A process whose demand comes in bursts (a model server)
// shows it by coming back after its quiet gaps: it keeps its share for twice
// the longest of its recent gaps, so that its next gap does not make it leave
// and join again. A process that holds pools it cannot resize, and a server
// (its event loop waits for requests), wait longer from the start. A process
// that stops for longer than that (a batch job done, a server nobody calls)
// gives its share back, and a process exiting never joins again. Pure:
// samples in, a decision out; the monitor thread applies it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pw::gov {

struct MembershipConfig {
  double busy_cpus = 0.5;        // demand (CPUs' worth of threads running or runnable) that counts
  uint64_t idle_leave_ns = 3e9;  // idle this long: give the share back (no gaps seen yet)
  // With pools it cannot resize, or serving requests, a process waits this many idle times.
  double fixed_pools_factor = 4;
  // The share is kept for this many times the longest recent gap the process came back from ...
  double gap_margin = 2;
  // ... and never longer than this many idle times: a gap longer than that
  // over the margin was a stop (the share rightly went back), not a burst's end.
  double max_hold_factor = 10;
  // Gaps shorter than this part of the idle time are the traffic's own pauses
  // (a server between two requests): they do not push longer gaps out of the history.
  double min_gap_fraction = 0.25;
};

// What the process has done, as of one monitor sample.
struct MembershipInput {
  uint64_t t_ns = 0;      // the sample's time (any clock, used consistently)
  double busy_cpus = 0;   // (CPU time + run-queue wait) in the interval / its length
  bool parallel = false;  // threads this process made (a pool, an OpenMP team) have worked
  bool launcher = false;  // it spawned ranks that a launcher describes
  // A framework is creating thread pools that it cannot resize later (an ONNX
  // Runtime session, a TensorFlow session or eager context): the process joins
  // now, before its work runs, so that those pools are sized from its share
  // and processes starting beside it see it at once.
  bool announced = false;
  bool fixed_pools = false;  // it holds such pools (made earlier)
  // It serves requests (monitor::event_loop_seen: an event loop waiting for
  // events while it holds a listening socket): its idle times are waits for
  // traffic, not work done.
  bool serves = false;
  // The process is exiting (the interpreter finalises, exit() was called):
  // whatever it runs now is its teardown, not work that needs a share. It
  // never joins again; a member keeps its share until its exit leaves the
  // registry (or its hold runs out), so that its neighbours are not divided
  // again while its last work may still be finishing.
  bool exiting = false;
};

// The recent gaps a process came back from.
constexpr size_t kMembershipGaps = 4;

// Kept between samples by the caller.
struct MembershipState {
  bool member = false;
  uint64_t last_busy_ns = 0;  // the last busy sample (a member has had one: it joined on it)
  bool busy_seen = false;     // last_busy_ns is a sample's (not the start)
  uint64_t gaps_ns[kMembershipGaps] = {};  // the last gaps (a ring: gap k at k % kMembershipGaps)
  size_t gaps = 0;                         // how many were seen (the ring holds the last ones)
};

enum class MembershipChange { kNone, kJoin, kLeave };

struct MembershipStep {
  MembershipChange change = MembershipChange::kNone;
  const char* why = "";  // a static string for the report
  uint64_t hold_ns = 0;  // how long the process may be idle before leaving, as of this sample
};

// Updates *st with one sample and says whether to join or leave now.
MembershipStep membership_step(MembershipState* st, const MembershipInput& in,
                               const MembershipConfig& c);

// How long a member with this history may be idle before it leaves, and why
// (a static phrase for the report).
uint64_t membership_hold_ns(const MembershipState& st, const MembershipInput& in,
                            const MembershipConfig& c, const char** why = nullptr);

}  // namespace pw::gov
