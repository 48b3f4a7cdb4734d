// hooks/ort: ONNX Runtime sessions get the plan (hooks/README.md has why here).
#pragma once

#include <stddef.h>

#include <string>

#include "governor/pool_rebuild.h"

namespace pw::hooks {

// The program's own SessionOptions, as far as they matter to the plan.
struct OrtUserOptions {
  int intra = 0;          // intra_op_num_threads (0: ORT's default)
  int inter = 0;          // inter_op_num_threads
  bool parallel = false;  // execution_mode == ORT_PARALLEL
  int spin = -1;          // session.intra_op.allow_spinning: -1 unset, 0, 1
};

// What parwidth sets on top of them; -1 = leave as the program had it.
struct OrtPlanned {
  int intra = -1;
  int inter = -1;
  int parallel = -1;
  int spin = -1;  // for both session.intra_op and session.inter_op allow_spinning
};

// A session is about to be created from `model` (an .onnx file's path when
// is_path, else the model's bytes): plan from its graph, decide each option
// (governor/setting.h) and note every decision for the report. Never throws.
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
