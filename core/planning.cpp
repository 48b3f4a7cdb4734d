// core/planning: the pipeline from machine to plan.
#include "core/planning.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cstdlib>
#include <cstring>

#include "core/cache.h"
#include "core/launchers.h"
#include "core/model_file.h"
#include "core/node.h"
#include "governor/process_share.h"
#include "graph/graph.h"

#include <ctime>

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

// Whether the parent process's environment (as it started) has the same
// launcher rank variables, with the same values, as ours.
bool parent_same_rank(const opt::EnvLookup& env, pid_t ppid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(ppid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0 || text.size() > (1u << 20)) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  // The launcher variables that name a local rank: a child of a rank carries the same.
  std::vector<const char*> names;
  for (const launchers::Launcher& l : launchers::kLaunchers) {
    names.push_back(l.rank);
    if (l.size) names.push_back(l.size);
  }
  for (const char* job : launchers::kJobVars) names.push_back(job);
  bool any = false;
  for (const char* name : names) {
    const char* mine = env(name);
    const std::string key = std::string(name) + "=";
    const char* theirs = nullptr;
    for (size_t at = 0; at < text.size();) {
      const size_t end = std::min(text.find('\0', at), text.size());
      if (text.compare(at, key.size(), key) == 0) theirs = text.c_str() + at + key.size();
      at = end + 1;
    }
    if (!mine != !theirs) return false;
    if (mine && std::strcmp(mine, theirs) != 0) return false;
    any = any || mine;
  }
  return any;
}

}  // namespace

bool graph_summary(const std::string& path, GraphSummary* out, std::string* err,
                   const std::string& input_shapes, std::vector<std::string>* shape_warnings) {
  graph::Graph g;
  graph::Stats st;
  graph::InputShapes shapes;
  std::vector<std::string> warnings;
  graph::Status s = graph::input_shapes_parse(input_shapes, &shapes, err);
  if (s == graph::Status::kOk) s = files::model_load(path, &g, err);
  if (s == graph::Status::kOk) s = graph::shapes_infer(&g, shapes, &warnings, err);
  if (s == graph::Status::kOk) s = graph::stats_compute(g, &st, err);
  if (shape_warnings)
    shape_warnings->insert(shape_warnings->end(), warnings.begin(), warnings.end());
  if (s != graph::Status::kOk) {
    if (err->empty()) *err = status_name(s);
    return false;
  }
  summary_from(g, st, out);
  return true;
}

graph::Status graph_costed(graph::Graph* g, const std::string& input_shapes, GraphSummary* out,
                           std::string* err) {
  graph::InputShapes given;
  std::string shape_err;
  if (graph::input_shapes_parse(input_shapes, &given, &shape_err) != graph::Status::kOk)
    given.clear();
  return graph_costed(g, given, out, err);
}

graph::Status graph_costed(graph::Graph* g, const graph::InputShapes& given, GraphSummary* out,
                           std::string* err) {
  std::string shape_err;
  std::vector<std::string> warnings;
  graph::shapes_infer(g, given, &warnings, &shape_err);  // unknown shapes: unit costs
  graph::Stats st;
  const graph::Status s = graph::stats_compute(*g, &st, err);
  if (s != graph::Status::kOk) {
    if (err->empty()) *err = status_name(s);
    return s;
  }
  summary_from(*g, st, out);
  return s;
}

gov::GraphWidth width_of(const graph::Stats& st) {
  gov::GraphWidth w;
  w.known = true;
  w.heavy = static_cast<long>(st.heavy);
  w.layers = static_cast<long>(st.layers);
  w.avg_width = static_cast<long>(st.avg_width);
  w.max_level_width = static_cast<long>(st.max_level_width);
  w.weighted_parallelism = st.weighted_parallelism;
  w.costs = st.costs;
  w.work_flops = st.work_flops;
  w.span_flops = st.span_flops;
  return w;
}

gov::CostGraph cost_graph_of(const graph::Graph& g) {
  gov::CostGraph cg;
  cg.ops.reserve(g.nodes.size());
  for (const graph::Node& n : g.nodes) {
    gov::OpCost c;
    c.flops = n.flops > 0 ? n.flops : 0;
    c.bytes = n.bytes > 0 ? n.bytes : 0;
    c.preds = n.preds;
    // What shape inference folded (constants, shape arithmetic) frameworks fold too.
    c.folded =
        n.op == "Constant" ||
        (!n.out.empty() && std::all_of(n.out.begin(), n.out.end(),
                                       [](const graph::TensorInfo& t) { return t.has_values; }));
    cg.ops.push_back(std::move(c));
  }
  return cg;
}

void summary_from(const graph::Graph& g, const graph::Stats& st, GraphSummary* out) {
  static_cast<gov::GraphWidth&>(*out) = width_of(st);
  out->source = st.source;
  out->work_over_span = st.work_over_span;
  out->fingerprint = graph::fingerprint(g);
  out->costs_known = st.costs == "flops" && !g.nodes.empty();
  out->cost_graph = out->costs_known ? cost_graph_of(g) : gov::CostGraph();
}

gov::Plan plan_with_cache(const opt::Options& o, const opt::EnvLookup& env,
                          const topo::Machine& machine, const topo::Budget& budget,
                          const GraphSummary& graph, std::vector<std::string>* warnings,
                          bool* calibration_found) {
  gov::PlanInputs in;
  in.mode = o.plan;
  in.width = static_cast<const gov::GraphWidth&>(graph);
  gov::PlanOptions po;
  po.pools = o.pools;
  po.threads = o.threads;
  po.smt = o.smt;
  *calibration_found = false;
  const bool user = po.pools > 0 || po.threads > 0;
  const int64_t now = static_cast<int64_t>(time(nullptr));
  const bool want_measured = o.plan == gov::PlanMode::kAuto || o.plan == gov::PlanMode::kMeasured;
  if (graph.known && !graph.fingerprint.empty() && want_measured && !user) {
    std::string warning;
    in.measured = cache::measured_load(cache::cache_dir(env), cache::machine_id(machine),
                                       cache::budget_id(budget), graph.fingerprint, now, &warning);
    if (!warning.empty()) warnings->push_back(warning);
  }
  gov::MachineModel model;
  const bool want_model =
      (o.plan == gov::PlanMode::kAuto && !in.measured.known) || o.plan == gov::PlanMode::kModel;
  if (graph.known && graph.costs_known && want_model && !user) {
    std::string warning;
    model = cache::calibration_load(cache::cache_dir(env), cache::machine_id(machine),
                                    cache::budget_id(budget), budget.cores,
                                    cache::cpu_traits(machine), now, calibration_found, &warning);
    if (!warning.empty()) warnings->push_back(warning);
    // What the OpenMP runtime compares its threads with (gov::teams_sleep).
    model.cpus = static_cast<int>(budget.cpus.size());
    in.costs = &graph.cost_graph;
    in.model = &model;
  }
  gov::Plan plan = gov::plan_choose(budget_view(budget), in, po);
  if (graph.known && !graph.remembered.empty())
    plan.source_detail = plan.source_detail.empty() ? graph.remembered
                                                    : plan.source_detail + "; " + graph.remembered;
  return plan;
}

// Slurm's "2(x3),1" (tasks on each node of the step, in node order) at `index`.
bool slurm_tasks_on_node(const char* text, int index, int* out) {
  if (!text || index < 0) return false;
  const char* p = text;
  int at = 0;
  while (*p) {
    char* end = nullptr;
    long n = std::strtol(p, &end, 10);
    if (end == p || n < 0) return false;
    long reps = 1;
    p = end;
    if (p[0] == '(' && p[1] == 'x') {
      reps = std::strtol(p + 2, &end, 10);
      if (end == p + 2 || *end != ')' || reps < 1) return false;
      p = end + 1;
    }
    if (*p != ',' && *p != '\0') return false;
    if (index < at + reps) {
      *out = static_cast<int>(n);
      return n > 0;
    }
    at += static_cast<int>(reps);
    if (*p == ',') ++p;
  }
  return false;
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
  // A launcher that bound each rank to its own CPUs has already divided the
  // node: the affinity is the share (ranks bound to a shared set, e.g. one
  // socket each for several ranks, are divided by the node registry).
  const char* ompi_bound = env("OMPI_MCA_orte_bound_at_launch");
  if (ompi_bound && std::strcmp(ompi_bound, "1") == 0 && env("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    *from = std::string(kBoundPrefix) + " by Open MPI (OMPI_MCA_orte_bound_at_launch=1)";
    return;
  }
  const char* slurm_bind = env("SLURM_CPU_BIND_TYPE");
  if (slurm_bind && *slurm_bind && !std::strstr(slurm_bind, "none") && env("SLURM_LOCALID")) {
    *from = std::string(kBoundPrefix) + " by Slurm (SLURM_CPU_BIND_TYPE=" + slurm_bind + ")";
    return;
  }
  for (const launchers::Launcher& p : launchers::kLaunchers) {
    if (!p.size) continue;  // Slurm's size is derived, below
    int r = 0, s = 0;
    if (env_int(env, p.rank, &r) && env_int(env, p.size, &s) && s > 0 && r < s) {
      *rank = r;
      *size = s;
      *from = std::string(p.who) + " (" + p.rank + "/" + p.size + ")";
      return;
    }
  }
  // Slurm: the step's tasks on this node. SLURM_STEP_TASKS_PER_NODE lists them
  // per node of the step ("2(x3),1"), indexed by SLURM_NODEID; outside a step
  // (a batch script) SLURM_TASKS_PER_NODE does the same for the job.
  // SLURM_NTASKS_PER_NODE is set only with --ntasks-per-node: a last resort.
  int r = 0, node = 0, s = 0;
  if (env_int(env, "SLURM_LOCALID", &r)) {
    const bool have_node = env_int(env, "SLURM_NODEID", &node);
    static const char* const kLists[] = {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"};
    for (const char* list : kLists) {
      if (have_node && slurm_tasks_on_node(env(list), node, &s) && r < s) {
        *rank = r;
        *size = s;
        *from = std::string("Slurm (SLURM_LOCALID/") + list + "[SLURM_NODEID])";
        return;
      }
    }
    if (env_int(env, "SLURM_NTASKS_PER_NODE", &s) && s > 0 && r < s) {
      *rank = r;
      *size = s;
      *from = "Slurm (SLURM_LOCALID/SLURM_NTASKS_PER_NODE)";
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

std::string boot_cache_dir(const opt::Options& o) {
  // One lstat where the directory is there already (every process after the first).
  auto usable = [](const std::string& dir) {
    struct stat st;
    return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 022) == 0;
  };
  for (const std::string& reg : node::candidate_dirs(o.node_dir)) {
    std::string dir = reg + "-boot";
    std::string why;
    if (usable(dir) || (cache::dir_make(dir, &why) && usable(dir))) return dir;
  }
  return "";
}

namespace {

// This machine: from the per-boot cache in `dir` while its key (boot id,
// online and possible CPUs) holds, else loaded (hwloc, else sysfs) and cached
// there for the next process. An hwloc load costs milliseconds at every
// activation; the cache, three small reads. *note says where it came from.
topo::Status machine_of_this_boot(const std::string& dir, topo::Machine* m, std::string* note,
                                  std::string* why) {
  std::string key;
  const bool keyed = !dir.empty() && topo::machine_cache_key(&key);
  const std::string path = dir + "/machine.txt";
  if (keyed) {
    std::string text, unused;
    if (cache::file_read_capped(path, 1u << 20, &text, &unused) &&
        topo::machine_parse(text, key, m, &unused) == topo::Status::kOk) {
      *note = "machine from this boot's cache (" + path + ")";
      return topo::Status::kOk;
    }
  }
  const topo::Status st = topo::machine_load("", m, why);
  std::string unused;
  if (st == topo::Status::kOk && keyed)
    cache::file_write_atomic(dir, "machine.txt", topo::machine_format(*m, key), &unused);
  return st;
}

}  // namespace

bool plan_process(const opt::Options& o, const opt::EnvLookup& env, const topo::Machine* machine,
                  Planned* out, std::string* err) {
  std::string why, machine_note;
  if (!machine && o.topology.empty()) out->boot_dir = boot_cache_dir(o);
  if (machine) {
    out->machine = *machine;
  } else if (topo::Status st =
                 o.topology.empty()
                     ? machine_of_this_boot(out->boot_dir, &out->machine, &machine_note, &why)
                     : topo::machine_load(o.topology, &out->machine, &why);
             st != topo::Status::kOk) {
    *err = "cannot read the topology (" + std::string(status_name(st)) + "): " + why;
    return false;
  }

  const bool described = !o.topology.empty();
  topo::BudgetInputs in;
  in.smt = o.smt;
  in.use_affinity = !described;
  // The main thread's mask (pid == its tid): a pinned worker's narrowed mask
  // must not become the budget.
  if (in.use_affinity) topo::affinity_read(&in.affinity, &why, getpid());
  // A described machine gets cgroup limits only from an explicit PARWIDTH_CGROUP.
  in.use_cgroup = false;
  if (!o.cgroup.empty()) {
    topo::Status st = topo::cgroup_read(o.cgroup, &in.cgroup, &why);
    if (st != topo::Status::kOk) {
      *err = "cannot read cgroup limits in " + o.cgroup + " (" + status_name(st) + "): " + why;
      return false;
    }
    in.use_cgroup = true;
  } else if (!described) {
    topo::Status st = topo::cgroup_self_limits(&in.cgroup, &why);
    if (st == topo::Status::kOk) {
      in.use_cgroup = true;
    } else if (st != topo::Status::kUnsupported) {
      *err =
          std::string("cannot read this process's cgroup limits (") + status_name(st) + "): " + why;
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
  if (!described && in.local_size > 1 && o.local_size <= 0) {
    // A child of a rank (exec'ed, or through a shell) that the rank confined
    // to its share carries the rank's variables: the share is already ours.
    std::vector<int> node, parent;
    for (const topo::Socket& s : out->machine.sockets)
      for (const topo::Core& c : s.cores) node.insert(node.end(), c.pus.begin(), c.pus.end());
    std::sort(node.begin(), node.end());
    if (in.use_cgroup && in.cgroup.have_cpuset) {
      std::vector<int> keep;
      std::set_intersection(node.begin(), node.end(), in.cgroup.cpuset.begin(),
                            in.cgroup.cpuset.end(), std::back_inserter(keep));
      node = std::move(keep);
    }
    const pid_t ppid = getppid();
    if (ppid > 1 && topo::affinity_read(&parent, &why, ppid) == topo::Status::kOk &&
        gov::inside_parent_rank(parent_same_rank(env, ppid), in.affinity, parent, node)) {
      out->local_from = "inside its parent's share (pid " + std::to_string(ppid) +
                        ", the same rank of " + out->local_from + ")";
      in.local_rank = 0;
      in.local_size = 1;
    }
  }
  out->node_registry = out->local_from == "none" ||
                       out->local_from.compare(0, std::strlen(kBoundPrefix), kBoundPrefix) == 0;

  if (topo::Status st = topo::budget_compute(out->machine, in, &out->budget, &why);
      st != topo::Status::kOk) {
    *err = "no CPU budget (" + std::string(status_name(st)) + "): " + why;
    return false;
  }
  if (!machine_note.empty()) {  // after the machine's own line
    auto& notes = out->budget.notes;
    notes.insert(notes.begin() + std::min<size_t>(1, notes.size()), machine_note);
  }

  if (!o.model.empty() && !out->graph.known) {
    // A model that cannot be read costs one warning and a plan without a graph.
    if (!graph_summary(o.model, &out->graph, &why, o.input_shapes))
      out->warnings.push_back("PARWIDTH_MODEL " + o.model + ": " + why +
                              "; planning without a graph");
  }
  out->plan = plan_with_cache(o, env, out->machine, out->budget, out->graph, &out->warnings,
                              &out->calibration_found);
  return true;
}

}  // namespace pw::planning
