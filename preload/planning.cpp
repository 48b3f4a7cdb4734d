// preload/planning: the pipeline from machine to plan.
#include "preload/planning.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>

#include "graph/graph.h"

namespace pw::planning {
namespace {

bool env_int(const opt::EnvLookup& env, const char* name, int* out) {
  const char* s = env(name);
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > 1 << 20) return false;
  *out = static_cast<int>(v);
  return true;
}

std::vector<int> process_affinity() {
  std::vector<int> cpus;
  // The main thread's mask (pid == its tid): a pinned worker's narrowed mask
  // must not become the budget.
  for (int n = 1024; n <= (1 << 16); n *= 4) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (!set) break;
    const size_t sz = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(sz, set);
    if (sched_getaffinity(getpid(), sz, set) == 0) {
      for (int c = 0; c < n; ++c)
        if (CPU_ISSET_S(c, sz, set)) cpus.push_back(c);
      CPU_FREE(set);
      return cpus;
    }
    CPU_FREE(set);
  }
  return cpus;
}

}  // namespace

bool graph_summary(const std::string& path, GraphSummary* out, std::string* err) {
  graph::Graph g;
  graph::Stats st;
  graph::Status s = graph::model_load(path, &g, err);
  if (s == graph::Status::kOk) s = graph::stats_compute(g, &st, err);
  if (s != graph::Status::kOk) {
    if (err->empty()) *err = graph::status_name(s);
    return false;
  }
  out->known = true;
  out->source = st.source;
  out->heavy = static_cast<long>(st.heavy);
  out->layers = static_cast<long>(st.layers);
  out->avg_width = static_cast<long>(st.avg_width);
  out->max_level_width = static_cast<long>(st.max_level_width);
  out->weighted_parallelism = st.weighted_parallelism;
  return true;
}

void local_share(const opt::Options& o, const opt::EnvLookup& env, int* rank, int* size,
                 std::string* from) {
  *rank = 0;
  *size = 1;
  *from = "none";
  if (o.local_rank >= 0 && o.local_size > 0) {
    *rank = o.local_rank;
    *size = o.local_size;
    *from = "PARWIDTH_LOCAL_RANK/PARWIDTH_LOCAL_SIZE";
    return;
  }
  struct Pair {
    const char* rank;
    const char* size;
    const char* who;
  };
  static const Pair kLaunchers[] = {
      {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "torchrun"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI"},
      {"MPI_LOCALRANKID", "MPI_LOCALNRANKS", "MPICH/Hydra"},
      {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "Slurm"},
  };
  for (const Pair& p : kLaunchers) {
    int r = 0, s = 0;
    if (env_int(env, p.rank, &r) && env_int(env, p.size, &s) && s > 0 && r < s) {
      *rank = r;
      *size = s;
      *from = std::string(p.who) + " (" + p.rank + "/" + p.size + ")";
      return;
    }
  }
}

gov::BudgetView budget_view(const topo::Budget& b) {
  gov::BudgetView v;
  for (size_t s = 0; s < b.sockets.size(); ++s) {
    for (const topo::Core& c : b.sockets[s].cores) {
      gov::CoreSlot slot;
      slot.socket = static_cast<int>(s);
      slot.pus = c.pus;
      v.cores.push_back(slot);
    }
  }
  return v;
}

bool plan_process(const opt::Options& o, const opt::EnvLookup& env, const topo::Machine* machine,
                  Planned* out, std::string* err) {
  std::string why;
  if (machine) {
    out->machine = *machine;
  } else if (topo::Status st = topo::machine_load(o.topology, &out->machine, &why);
             st != topo::Status::kOk) {
    *err = "cannot read the topology (" + std::string(topo::status_name(st)) + "): " + why;
    return false;
  }

  const bool described = !o.topology.empty();
  topo::BudgetInputs in;
  in.smt = o.smt;
  in.use_affinity = !described;
  if (in.use_affinity) in.affinity = process_affinity();
  // A described machine gets cgroup limits only from an explicit PARWIDTH_CGROUP.
  in.use_cgroup = false;
  if (!o.cgroup.empty()) {
    topo::Status st = topo::cgroup_read(o.cgroup, &in.cgroup, &why);
    if (st != topo::Status::kOk) {
      *err = "cannot read cgroup limits in " + o.cgroup + " (" + topo::status_name(st) +
             "): " + why;
      return false;
    }
    in.use_cgroup = true;
  } else if (!described) {
    topo::Status st = topo::cgroup_self_limits(&in.cgroup, &why);
    if (st == topo::Status::kOk) {
      in.use_cgroup = true;
    } else if (st != topo::Status::kUnsupported) {
      *err = std::string("cannot read this process's cgroup limits (") + topo::status_name(st) +
             "): " + why;
      return false;
    }
  }
  if (!o.cpus.empty()) {
    if (topo::cpulist_parse(o.cpus, &in.restrict_cpus, &why) != topo::Status::kOk) {
      out->warnings.push_back("PARWIDTH_CPUS ignored: " + why);
      in.restrict_cpus.clear();
    }
  }
  local_share(o, env, &in.local_rank, &in.local_size, &out->local_from);

  if (topo::Status st = topo::budget_compute(out->machine, in, &out->budget, &why);
      st != topo::Status::kOk) {
    *err = "no CPU budget (" + std::string(topo::status_name(st)) + "): " + why;
    return false;
  }

  gov::WidthView width;
  if (!o.model.empty()) {
    // A model that cannot be read costs one warning and a plan without a graph.
    if (graph_summary(o.model, &out->graph, &why)) {
      width.known = true;
      width.avg_width = out->graph.avg_width;
      width.max_level_width = out->graph.max_level_width;
    } else {
      out->warnings.push_back("PARWIDTH_MODEL " + o.model + ": " + why +
                              "; planning without a graph");
    }
  }
  gov::PlanOptions po;
  po.pools = o.pools;
  po.intra = o.intra;
  po.smt = o.smt;
  out->plan = gov::plan_for(budget_view(out->budget), width, po);
  return true;
}

}  // namespace pw::planning
