// hooks/python: the entry that parwidth's Python startup hook
// (preload/python/sitecustomize.py) calls through ctypes. Python-level code is the
// only route into what the interpreter reaches without crossing a library
// boundary (ONNX Runtime's binding, hooks/README.md); and an import is the
// moment a BLAS library that came with it has finished initialising.
//
//   op "selected"     nothing: 0 when the process is governed (activates nothing)
//   op "sweep"        args: the trigger, for the report      -> blas_sweep
//   op "ort_session"  args: "intra=N inter=N parallel=0|1 spin=-1|0|1 path=0|1",
//                     data: the model's path or bytes        -> reply "intra=N inter=N ..."
//   op "ort_used"     args: what the session used, as text   -> one report entry
//   op "torch_compile" args: the trigger: the program's first torch.compile
//                     -> omp_count_guarded_from (team sizes kept from then on)
//   op "exiting"      nothing: the interpreter has begun to finalise -> exit_begins
//   op "generation"   nothing: returns the plan's generation (>= 0), a call per
//                     session run, so one atomic load and no reply
//   op "in_force"     args: "runtime\tobject\tsetting\tvalue" lines read by Python at
//                     exit (torch's counts, ORT sessions' options) -> with the OpenMP
//                     runtimes' and BLAS pools' own, the report's in_force
//   op "ort_replan"   args: the program's options as for ort_session, the
//                     session's ("made_intra=N made_inter=N made_parallel=N
//                     made_spin=N"), since_ms=N (made), plan_ms=N (plan seen),
//                     bound=0|1, at_call=0|1, inflight=N, paused_ms=N
//                     -> reply "verdict=same|hold|rebuild|kept|defer intra=N ..."
// Returns 0 (the generation for "generation"), or -1 when the process is not
// governed (the reply is then empty).
#include <stdio.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "hooks/abi.h"
#include "hooks/blas.h"
#include "hooks/fail_open.h"
#include "hooks/in_force.h"
#include "hooks/ort.h"
#include "runtime/api.h"

namespace pw::hooks {
namespace {

int arg_int(const char* args, const char* key, int def) {
  const size_t n = strlen(key);
  for (const char* p = args; p && *p;) {
    while (*p == ' ') ++p;
    if (strncmp(p, key, n) == 0 && p[n] == '=') return atoi(p + n + 1);
    p = strchr(p, ' ');
  }
  return def;
}

// The program's side's values ("runtime\tobject\tsetting\tvalue" lines), and the
// OpenMP runtimes' and BLAS pools' own read now, as what is in force at exit.
void in_force_from_python(const char* args) {
  std::vector<pw::rt::RuntimeValue> values;
  for (const char* line = args; *line;) {
    const char* end = strchr(line, '\n');
    const std::string text(line, end ? static_cast<size_t>(end - line) : strlen(line));
    line = end ? end + 1 : line + text.size();
    pw::rt::RuntimeValue v;
    size_t a = text.find('\t'), b = a == std::string::npos ? a : text.find('\t', a + 1),
           c = b == std::string::npos ? b : text.find('\t', b + 1);
    if (c == std::string::npos) continue;
    v.runtime = text.substr(0, a);
    v.object = text.substr(a + 1, b - a - 1);
    v.setting = text.substr(b + 1, c - b - 1);
    v.value = atoi(text.c_str() + c + 1);
    values.push_back(std::move(v));
  }
  runtime_values_read(&values);
  pw::rt::runtime_values_set(std::move(values));
}

}  // namespace
}  // namespace pw::hooks

extern "C" __attribute__((visibility("default"))) int parwidth_python(const char* op,
                                                                      const char* args,
                                                                      const void* data, size_t size,
                                                                      char* reply,
                                                                      size_t reply_size) {
  using namespace pw::hooks;
  if (reply && reply_size) reply[0] = '\0';
  if (!op || !pw::rt::selected()) return -1;
  int rc = -1;
  fail_open("python", [&] {
    if (strcmp(op, "selected") == 0) {  // governed at all; activates nothing
      rc = 0;
      return;
    }
    if (strcmp(op, "sweep") == 0) {
      blas_sweep(args && *args ? args : "after a Python import");
      rc = 0;
      return;
    }
    if (strcmp(op, "torch_compile") == 0) {
      pw::rt::omp_count_guarded_from(args && *args ? args : "torch.compile");
      rc = 0;
      return;
    }
    if (strcmp(op, "generation") == 0) {
      rc = static_cast<int>(pw::rt::plan_generation() & 0x7fffffffu);
      return;
    }
    if (strcmp(op, "exiting") == 0) {
      pw::rt::exit_begins();
      rc = 0;
      return;
    }
    const bool replan = strcmp(op, "ort_replan") == 0;
    if (replan || strcmp(op, "ort_session") == 0) {
      OrtUserOptions u;
      u.intra = arg_int(args, "intra", 0);
      u.inter = arg_int(args, "inter", 0);
      u.parallel = arg_int(args, "parallel", 0) == 1;
      u.spin = arg_int(args, "spin", -1);
      OrtPlanned p;
      const char* verdict = "";
      if (replan) {
        OrtPlanned made;
        made.intra = arg_int(args, "made_intra", -1);
        made.inter = arg_int(args, "made_inter", -1);
        made.parallel = arg_int(args, "made_parallel", -1);
        made.spin = arg_int(args, "made_spin", -1);
        pw::gov::RebuildInput facts;
        facts.since_change_s = arg_int(args, "since_ms", 0) / 1000.0;
        facts.since_plan_s = arg_int(args, "plan_ms", arg_int(args, "since_ms", 0)) / 1000.0;
        facts.pinned_by_program = arg_int(args, "bound", 0) == 1;
        facts.at_call = arg_int(args, "at_call", 1) == 1;
        facts.runs_in_flight = arg_int(args, "inflight", 0);
        facts.paused_s = arg_int(args, "paused_ms", 0) / 1000.0;
        facts.serves = pw::monitor::event_loop_seen();
        facts.rebuilds = arg_int(args, "rebuilds", 0);
        pw::gov::RebuildVerdict v = pw::gov::RebuildVerdict::kSame;
        p = ort_session_replan(u, made, facts, &v);
        verdict = pw::gov::rebuild_verdict_name(v);
      } else {
        p = ort_session_plan(data, size, arg_int(args, "path", 0) == 1, u, "Python");
      }
      if (reply && reply_size)
        snprintf(reply, reply_size, "%s%s%sintra=%d inter=%d parallel=%d spin=%d",
                 *verdict ? "verdict=" : "", verdict, *verdict ? " " : "", p.intra, p.inter,
                 p.parallel, p.spin);
      rc = 0;
      return;
    }
    if (strcmp(op, "ort_used") == 0) {
      ort_session_used(args ? args : "");
      rc = 0;
      return;
    }
    if (strcmp(op, "in_force") == 0) {
      in_force_from_python(args ? args : "");
      rc = 0;
      return;
    }
  });
  return rc;
}
