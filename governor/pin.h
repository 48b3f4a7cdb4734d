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

// The pin mode in force. Child processes run on the process's cores while they
// live (DataLoader workers, a multiprocessing pool, a helper it spawned): a
// pool thread held to one core cannot step aside for one of them, and its
// team's barrier then waits for the thread that shares its core. While
// children run, pool threads pinned one per core are pinned to their pool's
// cores instead, where the kernel balances them with the children; so are a
// forked child's (`forked`), which runs beside its parent on the parent's
// cores. The user's PARWIDTH_PIN=pool or none stands as it is.
PinMode pin_in_force(PinMode chosen, bool children, bool forked);

// Whether the process has children, as the monitor's samples see them, held:
// from the first sample that sees one until `hold` samples in a row have seen
// none. A DataLoader starts its workers again each epoch, a pool of workers
// may be replaced one by one: each gap would otherwise move every pool thread
// twice.
struct ChildrenHold {
  bool on = false;
  int absent = 0;  // samples in a row without a child, while on
};
// One sample: `seen` whether a child was seen. True when `on` changed.
bool children_step(ChildrenHold* h, bool seen, int hold);

}  // namespace pw::gov
