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

}  // namespace pw::gov
