// governor/pin: whether parwidth pins a new thread, and what it says when it
// does not. Pure: the thread hook (hooks/pthread.cpp) gathers the facts.
#pragma once

namespace pw::gov {

// PARWIDTH_PIN: a pool thread on one core of its pool (kCore), anywhere in its
// pool's cores (kPool), or not pinned at all (kNone).
enum class PinMode { kNone, kPool, kCore };

struct PinFacts {
  bool governing = false;        // active, mode govern
  bool pin_off = false;          // PARWIDTH_PIN=none
  bool user_affinity = false;    // the creator put an affinity in the thread's attributes
  bool runtime_binding = false;  // an OpenMP runtime keeps its own binding for its threads
  bool creator_in_pool = false;  // the creating thread is one of the plan's pool members
};

struct PinVerdict {
  bool pin = false;  // pin it to its pool's core (or core set)
  // The creator is a thread we pinned and the new thread is left to its
  // runtime's binding: without us it would have inherited the process's set,
  // and the runtime may bind nothing itself, so it gets the process's set.
  bool widen = false;
  const char* why = nullptr;  // the report's reason when not pinned by choice; nullptr if none
};

PinVerdict pin_verdict(const PinFacts& f);

}  // namespace pw::gov
