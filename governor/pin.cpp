// governor/pin: pin, leave to the creator, or leave to the OpenMP runtime.
#include "governor/pin.h"

namespace pw::gov {

PinVerdict pin_verdict(const PinFacts& f) {
  PinVerdict v;
  v.pin = f.governing && !f.pin_off && !f.user_affinity && !f.runtime_binding;
  if (f.user_affinity) {
    v.why = "the creator set the thread's affinity; kept";
  } else if (f.runtime_binding) {
    v.why = "the OpenMP runtime's own binding stands (the user's choice or its own)";
    v.widen = f.governing && !f.pin_off && f.creator_in_pool;
  }
  return v;
}

PinMode pin_in_force(PinMode chosen, bool children, bool forked) {
  return chosen == PinMode::kCore && (children || forked) ? PinMode::kPool : chosen;
}

bool children_step(ChildrenHold* h, bool seen, int hold) {
  if (seen) {
    h->absent = 0;
    if (h->on) return false;
    h->on = true;
    return true;
  }
  if (!h->on) return false;
  if (++h->absent < (hold > 0 ? hold : 1)) return false;
  h->on = false;
  h->absent = 0;
  return true;
}

}  // namespace pw::gov
