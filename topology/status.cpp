// Status names, for logs and the report.
#include "topology/topology.h"

namespace pw::topo {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kUnsupported:
      return "unsupported";
    case Status::kInvalid:
      return "invalid";
    case Status::kIoError:
      return "io-error";
  }
  return "unknown";
}

}  // namespace pw::topo
