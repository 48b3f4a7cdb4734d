// governor/membership: whether a process takes a share of the node right now.
//
// A process counts in the node registry only while it runs parallel work: its
// pool threads or OpenMP teams have run and it keeps CPUs busy. A launcher
// (the parent of ranks a launcher describes), a driver waiting for its child
// or any idle process gives its share back after a few seconds, and takes one
// again as soon as its work resumes. Pure: samples in, a decision out; the
// monitor thread applies it.
#pragma once

#include <cstdint>

namespace pw::gov {

struct MembershipConfig {
  double busy_cpus = 0.5;        // demand (CPUs' worth of threads running or runnable) that counts
  uint64_t idle_leave_ns = 3e9;  // idle this long: give the share back
};

// What the process has done, as of one monitor sample.
struct MembershipInput {
  uint64_t t_ns = 0;      // the sample's time (any clock, used consistently)
  double busy_cpus = 0;   // (CPU time + run-queue wait) in the interval / its length
  bool parallel = false;  // a pool thread or OpenMP team of this process has run
  bool launcher = false;  // it spawned ranks that a launcher describes
  // A framework is creating thread pools that it cannot resize later (an ONNX
  // Runtime session, a TensorFlow session or eager context): the process joins
  // now, before its work runs, so that those pools are sized from its share
  // and processes starting beside it see it at once.
  bool announced = false;
};

// Kept between samples by the caller.
struct MembershipState {
  bool member = false;
  uint64_t last_busy_ns = 0;  // the last busy sample (a member has had one: it joined on it)
};

enum class MembershipChange { kNone, kJoin, kLeave };

struct MembershipStep {
  MembershipChange change = MembershipChange::kNone;
  const char* why = "";  // a static string for the report
};

// Updates *st with one sample and says whether to join or leave now.
MembershipStep membership_step(MembershipState* st, const MembershipInput& in,
                               const MembershipConfig& c);

}  // namespace pw::gov
