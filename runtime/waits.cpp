// runtime/waits: the bounded waits of the runtimes that read their variables
// when they load (libgomp's GOMP_SPINCOUNT, OpenBLAS's OPENBLAS_THREAD_TIMEOUT),
// set in the environment at load, before the program loads them; and the
// report's words for how each runtime's idle threads wait. The decisions are
// governor/pools_wait's.
#include <link.h>
#include <stdlib.h>

#include <cstring>

#include "governor/pools_wait.h"
#include "runtime/state.h"

namespace pw::rt {

namespace {

// What parwidth set, for its children: a variable whose value is still the one
// listed here was not the user's choice (a governed child decides afresh; a
// child parwidth does not govern gets its parent's environment back).
constexpr char kMarker[] = "PARWIDTH_WAITS_SET";

struct EnvKnob {
  gov::WaitKnob knob;
  const char* var;           // what parwidth sets
  const char* also_user[2];  // other variables by which the user chooses the waiting
  const char* file_part;     // the runtime's objects, by file name
};

const EnvKnob kEnvKnobs[] = {
    {gov::WaitKnob::kGompSpinCount, "GOMP_SPINCOUNT", {"OMP_WAIT_POLICY", nullptr}, "libgomp"},
    {gov::WaitKnob::kOpenblasTimeout, "OPENBLAS_THREAD_TIMEOUT", {nullptr, nullptr}, "openblas"},
};

// The value the marker lists for var, or nullptr.
const char* marked_value(const char* marker, const char* var, char* buf, size_t size) {
  if (!marker) return nullptr;
  const size_t n = strlen(var);
  for (const char* p = marker; *p;) {
    const char* end = strchr(p, ' ');
    const size_t len = end ? static_cast<size_t>(end - p) : strlen(p);
    if (len > n && strncmp(p, var, n) == 0 && p[n] == '=' && len - n - 1 < size) {
      memcpy(buf, p + n + 1, len - n - 1);
      buf[len - n - 1] = '\0';
      return buf;
    }
    p += len;
    while (*p == ' ') ++p;
  }
  return nullptr;
}

// var is set, and not to what parwidth set it (the marker inherited from a parent).
bool user_set(const char* var, const char* marker) {
  const char* v = getenv(var);
  if (!v || !*v) return false;
  char buf[32];
  const char* ours = marked_value(marker, var, buf, sizeof buf);
  return !ours || strcmp(ours, v) != 0;
}

}  // namespace

void waits_at_load(Runtime& r, bool selected) {
  const char* marker = getenv(kMarker);
  if (!selected) {
    // Not governed here (excluded, PARWIDTH_MODE=off): the environment as the user
    // made it, without what a governed parent set.
    if (!marker) return;
    for (const EnvKnob& k : kEnvKnobs)
      if (!user_set(k.var, marker) && getenv(k.var)) unsetenv(k.var);
    unsetenv(kMarker);
    return;
  }
  // The runtimes already loaded read their variables before this constructor
  // (a library the program is linked against initialises first).
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        auto* w = static_cast<Runtime::Waits*>(data);
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        const char* base = strrchr(info->dlpi_name, '/');
        base = base ? base + 1 : info->dlpi_name;
        for (const EnvKnob& k : kEnvKnobs)
          if (strstr(base, k.file_part) && w->at_start.size() < 16) w->at_start.push_back(base);
        return 0;
      },
      &r.waits);
  gov::PoolContext ctx;
  ctx.governing = r.opt.mode == opt::Mode::kGovern;
  ctx.override_user = r.opt.override_user;
  std::string set;
  for (size_t i = 0; i < sizeof kEnvKnobs / sizeof *kEnvKnobs; ++i) {
    const EnvKnob& k = kEnvKnobs[i];
    gov::WaitFacts f;
    f.knob = k.knob;
    f.user_set = user_set(k.var, marker);
    for (const char* also : k.also_user)
      if (also && getenv(also) && *getenv(also)) f.user_set = true;
    // A runtime loaded later reads what is set now.
    f.open = true;
    const gov::WaitDecision d = gov::wait_decide(ctx, f);
    r.waits.env[i] = d;
    if (d.changes()) {
      const std::string v = std::to_string(d.value);
      setenv(k.var, v.c_str(), 1);
      set += (set.empty() ? "" : " ") + std::string(k.var) + "=" + v;
    }
  }
  if (!set.empty())
    setenv(kMarker, set.c_str(), 1);
  else if (marker)
    unsetenv(kMarker);
}

void waits_note(Runtime& r) {
  for (size_t i = 0; i < sizeof kEnvKnobs / sizeof *kEnvKnobs; ++i) {
    const EnvKnob& k = kEnvKnobs[i];
    const gov::WaitDecision& d = r.waits.env[i];
    std::string early;
    for (const std::string& o : r.waits.at_start)
      if (o.find(k.file_part) != std::string::npos) early += (early.empty() ? "" : ", ") + o;
    const char* v = getenv(k.var);
    framework_note(k.file_part, std::string(k.var) + " (idle workers' wait)",
                   d.changes() ? std::to_string(d.value) : (v ? v : ""), d.changes(),
                   std::string(gov::wait_verdict_text(d.verdict)) +
                       (d.changes() ? "; set in the environment at load, for the copies the "
                                      "program loads later (children inherit it)"
                                    : "") +
                       (early.empty() ? std::string()
                                      : "; loaded before parwidth, with its own wait: " + early));
  }
}

std::string pool_wait_text(gov::WaitKnob knob, const std::string& object) {
  if (!g) return "";
  Runtime& r = *g;
  if (knob == gov::WaitKnob::kKmpBlocktime || knob == gov::WaitKnob::kTfSpinning) {
    gov::WaitDecision d;
    {
      std::lock_guard<std::mutex> lock(g->mu);
      const int i = knob == gov::WaitKnob::kKmpBlocktime ? 0 : 1;
      if (!r.waits.decided[i]) return gov::wait_default_text(knob);
      d = i == 0 ? r.waits.blocktime : r.waits.tf;
    }
    if (d.changes())
      return knob == gov::WaitKnob::kKmpBlocktime
                 ? "idle team threads spin " + std::to_string(d.value) +
                       " ms, then sleep (kmp_set_blocktime, by parwidth)"
                 : std::string("idle pool threads sleep at once (no spinning, by parwidth)");
    return std::string(gov::wait_default_text(knob)) + " (" + gov::wait_verdict_text(d.verdict) +
           ")";
  }
  for (size_t i = 0; i < sizeof kEnvKnobs / sizeof *kEnvKnobs; ++i) {
    const EnvKnob& k = kEnvKnobs[i];
    if (k.knob != knob) continue;
    for (const std::string& o : r.waits.at_start)
      if (o == object)
        return std::string(gov::wait_default_text(knob)) + " (loaded before parwidth)";
    const gov::WaitDecision& d = r.waits.env[i];
    const char* v = getenv(k.var);
    if (d.changes())
      return knob == gov::WaitKnob::kGompSpinCount
                 ? "idle team threads spin " + std::to_string(d.value) +
                       " iterations, then sleep (GOMP_SPINCOUNT, by parwidth)"
                 : "idle workers spin 2^" + std::to_string(d.value) +
                       " time-stamp ticks, then sleep (OPENBLAS_THREAD_TIMEOUT, by parwidth)";
    if (d.verdict == gov::WaitVerdict::kKeep)
      return std::string("the user's: ") + k.var + "=" + (v ? v : "") +
             (k.also_user[0] && getenv(k.also_user[0])
                  ? std::string(" ") + k.also_user[0] + "=" + getenv(k.also_user[0])
                  : std::string());
    return gov::wait_default_text(knob);
  }
  return "";
}

void wait_decided(gov::WaitKnob knob, const gov::WaitDecision& d) {
  if (!g) return;
  std::lock_guard<std::mutex> lock(g->mu);
  if (knob == gov::WaitKnob::kKmpBlocktime) {
    g->waits.blocktime = d;
    g->waits.decided[0] = true;
  } else if (knob == gov::WaitKnob::kTfSpinning) {
    g->waits.tf = d;
    g->waits.decided[1] = true;
  }
}

}  // namespace pw::rt
