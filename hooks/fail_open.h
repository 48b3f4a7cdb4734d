// hooks/fail_open: the hooks' name for the one fail-open boundary (runtime/fail_open.h).
#pragma once

#include "runtime/fail_open.h"

namespace pw::hooks {
using rt::fail_open;
}  // namespace pw::hooks
