// base/status: the one status vocabulary of every layer. A function returns the
// subset that applies to it (its header says which); status_name() words each for
// messages and the report.
#pragma once

namespace pw {

enum class Status {
  kOk = 0,
  // Inputs: what a caller gave or a file held.
  kUnsupported,  // not available here, or a valid input of a kind not read: fall back
  kInvalid,      // text that does not parse (a CPU list, a topology, a machine file)
  kBadFormat,    // bytes that are not a model of the detected or requested format
  kIoError,      // cannot open or read a path
  kCycle,        // a graph with a cycle: it has no width statistic
  kTooLarge,     // over a size limit (a file, a node count, an expansion)
  kNoMemory,     // an allocation failed
  kInternal,     // a bug: an unexpected exception was caught
  // Counters.
  kError,    // a bad argument, or a system call that should have worked failed
  kBusy,     // already running, already started
  kPending,  // not known yet (the sampler is still starting)
  // Stored files (a calibration, a measured plan).
  kCorrupt,       // not such a file, truncated, numbers out of range, dated in the future
  kOtherMachine,  // measured on another machine
  kOtherBudget,   // measured on this machine for another CPU budget
  kOtherGraph,    // measured for another graph (a copied file, a name collision)
  kStale,         // older than its maximum age (keep last: tests/unit/base walks up to it)
};

const char* status_name(Status s);

}  // namespace pw
