// base/status: see status.h.
#include "base/status.h"

namespace pw {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kUnsupported:
      return "unsupported";
    case Status::kInvalid:
      return "invalid";
    case Status::kBadFormat:
      return "bad format";
    case Status::kIoError:
      return "io error";
    case Status::kCycle:
      return "cycle";
    case Status::kTooLarge:
      return "too large";
    case Status::kNoMemory:
      return "out of memory";
    case Status::kInternal:
      return "internal error";
    case Status::kError:
      return "error";
    case Status::kBusy:
      return "busy";
    case Status::kPending:
      return "pending";
    case Status::kCorrupt:
      return "corrupt";
    case Status::kOtherMachine:
      return "another machine";
    case Status::kOtherBudget:
      return "another CPU budget";
    case Status::kOtherGraph:
      return "another graph";
    case Status::kStale:
      return "stale";
  }
  return "unknown";
}

}  // namespace pw
