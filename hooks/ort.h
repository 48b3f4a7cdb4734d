// hooks/ort: ONNX Runtime sessions get the plan (hooks/README.md has why here).
#pragma once

#include <stddef.h>

#include <string>

#include "governor/pool_rebuild.h"
#include "governor/pools_ort.h"

namespace pw::hooks {

// The program's options and what parwidth sets on top (governor/pools_ort.h).
using gov::OrtPlanned;
using gov::OrtUserOptions;

// A session is about to be created from `model` (an .onnx file's path when
// is_path, else the model's bytes): plan from its graph, decide each option
// (governor/pools_ort.h) and note every decision for the report. Never throws.
OrtPlanned ort_session_plan(const void* model, size_t size, bool is_path, const OrtUserOptions& u,
                            const char* api);

// A session made with the program's `u` and parwidth's `made` on top, asked
// after the plan changed (at a call, or by its watcher between runs; `facts`:
// its times, runs in flight and IO bindings; now and want are filled here):
// whether it is made again with the returned options (*verdict kRebuild;
// governor/pool_rebuild decides; kHold and kDefer: ask again later). A rebuild
// or a kept session is noted for the report (the first 32). Never throws.
OrtPlanned ort_session_replan(const OrtUserOptions& u, const OrtPlanned& made,
                              gov::RebuildInput facts, gov::RebuildVerdict* verdict);

// After the session exists: the sizes ORT says it used and the threads it started.
void ort_session_used(const std::string& what);

}  // namespace pw::hooks
