// hooks/in_force: the runtimes' own thread counts, read from their getters, for
// the report's in_force (runtime/api.h, RuntimeValue).
#include "hooks/in_force.h"

#include <elf.h>
#include <link.h>

#include <cstring>

#include "governor/pools_omp.h"
#include "hooks/blas.h"
#include "hooks/dynsym.h"
#include "hooks/real.h"

namespace pw::hooks {
namespace {

constexpr int kMaxRuntimes = 8;

struct OmpRuntimes {
  int n = 0;
  const char* name[kMaxRuntimes] = {};
  int (*max_threads[kMaxRuntimes])() = {};
};

// An OpenMP runtime's own object, by file name (a wheel's renamed copy included).
bool omp_object(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return !strncmp(base, "libgomp", 7) || !strncmp(base, "libomp", 6) ||
         !strncmp(base, "libiomp", 7);
}

int omp_scan(struct dl_phdr_info* info, size_t, void* data) {
  auto* rts = static_cast<OmpRuntimes*>(data);
  if (rts->n >= kMaxRuntimes || !info->dlpi_name || !omp_object(info->dlpi_name)) return 0;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  DynTables t;
  if (!dyn || !dyn_tables_read(info->dlpi_addr, dyn, &t)) return 0;
  bool ifunc = false;
  void* fn = dyn_lookup(t, "omp_get_max_threads", &ifunc);
  if (!fn || ifunc) return 0;
  rts->name[rts->n] = info->dlpi_name;
  rts->max_threads[rts->n++] = reinterpret_cast<int (*)()>(fn);
  return 0;
}

}  // namespace

void runtime_values_read(std::vector<rt::RuntimeValue>* out) {
  // Found during the walk, called after it: a runtime's getter must not run
  // while the loader's lock is held.
  OmpRuntimes rts;
  dl_iterate_phdr(omp_scan, &rts);
  for (int i = 0; i < rts.n; ++i) {
    const char* base = strrchr(rts.name[i], '/');
    rt::RuntimeValue v;
    v.runtime = "openmp";
    v.object = base ? base + 1 : rts.name[i];
    v.setting = "max threads (omp_get_max_threads on the exiting thread)";
    v.value = rts.max_threads[i]();
    v.waits = rt::pool_wait_text(gov::omp_runtime_of(v.object.c_str()) == gov::OmpRuntime::kGnu
                                     ? gov::WaitKnob::kGompSpinCount
                                     : gov::WaitKnob::kKmpBlocktime,
                                 v.object);
    out->push_back(std::move(v));
  }
  blas_values(out);
}

}  // namespace pw::hooks
