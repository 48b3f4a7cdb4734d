// core/report: serialising what was done.
#include "core/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "core/json.h"
#include "core/log.h"
#include "governor/plan_store.h"

namespace pw::report {

std::string budget_json(const topo::Budget& b) {
  json::Writer w;
  w.begin_object();
  w.key("cpus").ints(b.cpus);
  w.key("cores").value(b.cores);
  w.key("sockets").value(static_cast<int>(b.sockets.size()));
  w.key("quota_cpus").value_or_null(b.quota_cpus > 0, b.quota_cpus);
  w.key("local_rank").value(b.local_rank);
  w.key("local_size").value(b.local_size);
  w.key("notes").strings(b.notes);
  w.end_object();
  return w.str();
}

std::string plan_json(const gov::Plan& p) {
  json::Writer w;
  w.begin_object();
  w.key("pools").value(p.pools);
  w.key("threads").value(p.threads);
  w.key("slots").value(p.slots);
  w.key("core_sets").begin_array();
  for (const auto& set : p.core_sets) w.ints(set);
  w.end_array();
  w.key("spanning_pools").value(p.spanning_pools);
  w.key("source").value(p.source);
  w.key("source_detail").value(p.source_detail);
  // The model's candidates with their predicted times (source "model").
  w.key("predicted").begin_array();
  for (const gov::Plan::Predicted& c : p.predicted)
    w.begin_object()
        .key("pools")
        .value(c.pools)
        .key("intra")
        .value(c.threads)
        .key("seconds")
        .value(c.seconds)
        .end_object();
  w.end_array();
  // What was measured, when and how (source "measured"; null otherwise).
  w.key("measured");
  if (p.measured.known) {
    const gov::MeasuredPlan& m = p.measured;
    w.begin_object();
    w.key("pools").value(m.pools);
    w.key("intra").value(m.threads);
    w.key("median").value(m.seconds);
    w.key("min").value(m.min);
    w.key("max").value(m.max);
    w.key("runs").value(m.runs);
    w.key("metric").value(m.metric);
    w.key("by").value(m.by);
    w.key("created").value(static_cast<long long>(m.created));
    w.key("created_utc").value(gov::utc_text(m.created));
    w.key("version").value(m.version);
    w.end_object();
  } else {
    w.null();
  }
  w.key("notes").strings(p.notes);
  w.end_object();
  return w.str();
}

void width_fields(json::Writer* w, const gov::GraphWidth& g) {
  w->key("heavy").value(g.heavy);
  w->key("layers").value(g.layers);
  w->key("avg_width").value(g.avg_width);
  w->key("max_level_width").value(g.max_level_width);
  w->key("weighted_parallelism").value(g.weighted_parallelism);
  w->key("costs").value(g.costs);
  w->key("work_flops").value(g.work_flops);
  w->key("span_flops").value(g.span_flops);
}

namespace {

void stats_fields(json::Writer* w, const graph::Stats& s, bool top) {
  w->begin_object();
  w->key("source").value(s.source);
  w->key("name").value(s.name);
  w->key("nodes").value(static_cast<long long>(s.nodes));
  width_fields(w, planning::width_of(s));
  w->key("work_over_span").value(s.work_over_span);
  w->key("bytes").value(s.bytes);
  w->key("flops_known_nodes").value(static_cast<long long>(s.known_flops_nodes));
  w->key("heavy_by_type").begin_object();
  for (const auto& [op, count] : s.heavy_by_type) w->key(op).value(static_cast<long long>(count));
  w->end_object();
  w->key("heavy_flops").value(s.heavy_flops);
  w->key("heavy_flops_by_type").begin_object();
  for (const auto& [op, f] : s.heavy_flops_by_type) w->key(op).value(f);
  w->end_object();
  if (!s.note.empty()) w->key("note").value(s.note);
  if (top) {
    w->key("subgraphs").begin_array();
    for (const graph::Stats& sub : s.subgraphs) stats_fields(w, sub, false);
    w->end_array();
  }
  w->end_object();
}

}  // namespace

std::string stats_json(const graph::Stats& s) {
  try {
    json::Writer w;
    stats_fields(&w, s, true);
    return w.str();
  } catch (...) {
    // Out of memory: an empty object keeps callers' JSON well-formed.
    log::warn("the graph's statistics could not be written (out of memory)");
    return "{}";
  }
}

std::string graph_json(const planning::GraphSummary& g) {
  if (!g.known) return "null";
  json::Writer w;
  w.begin_object();
  w.key("source").value(g.source);
  width_fields(&w, g);
  w.key("work_over_span").value(g.work_over_span);
  w.key("fingerprint");
  if (g.fingerprint.empty())
    w.null();
  else
    w.value(g.fingerprint);
  w.end_object();
  return w.str();
}

std::string report_text(const Input& in) {
  json::Writer w;
  w.begin_object();
  w.key("mode").value(opt::mode_name(in.opt->mode));
  w.key("pid").value(static_cast<long long>(getpid()));
  w.key("program").value(in.program);
  w.key("governed").value(in.active && in.opt->mode == opt::Mode::kGovern);
  if (!in.fail_reason.empty()) w.key("ungoverned_because").value(in.fail_reason);
  const planning::Planned* p = in.planned;
  w.key("budget");
  if (p)
    w.raw(budget_json(p->budget));
  else
    w.null();
  w.key("graph").raw(p ? graph_json(p->graph) : "null");
  w.key("plan");
  if (p)
    w.raw(plan_json(p->plan));
  else
    w.null();
  w.key("threads").begin_array();
  for (const gov::ThreadRecord& t : in.threads) {
    w.begin_object();
    w.key("tid").value(static_cast<long long>(t.tid));
    w.key("creator").value(t.creator);
    w.key("pool").value(t.pool);
    w.key("cpu").value_or_null(t.pinned && t.cpu >= 0, t.cpu);
    w.key("pinned").value(t.pinned);
    if (!t.pin_error.empty()) w.key("pin_error").value(t.pin_error);
    if (t.ended) w.key("ended").value(true);
    w.end_object();
  }
  w.end_array();
  w.key("threads_ended").value(static_cast<long long>(in.threads_ended));
  w.key("threads_unlisted").value(static_cast<long long>(in.threads_unlisted));
  w.key("openmp").begin_object().key("team_cap").value(in.omp_cap).end_object();
  w.key("plan_timeline").raw(in.timeline_json.empty() ? "null" : in.timeline_json);
  w.key("in_force").raw(in.in_force_json.empty() ? "null" : in.in_force_json);
  w.key("hooks")
      .begin_object()
      .key("originals_looked_up")
      .value(static_cast<long long>(in.originals_looked_up))
      .end_object();
  w.key("frameworks").begin_array();
  for (const FrameworkNote& f : in.frameworks) {
    w.begin_object();
    w.key("name").value(f.name);
    w.key("setting").value(f.setting);
    w.key("value").value(f.value);
    w.key("applied").value(f.applied);
    w.key("why").value(f.why);
    w.key("time_ms").value(f.time_ms);
    w.end_object();
  }
  w.end_array();
  w.key("pools").begin_array();
  for (const PoolNote& pool : in.pools) {
    w.begin_object();
    w.key("library").value(pool.library);
    w.key("object").value(pool.object);
    w.key("before").value_or_null(pool.before >= 0, pool.before);
    w.key("after").value_or_null(pool.after >= 0, pool.after);
    w.key("set_by").value(pool.set_by);
    w.key("applied").value(pool.applied);
    w.key("why").value(pool.why);
    w.end_object();
  }
  w.end_array();
  w.key("functions").raw(in.functions_json.empty() ? "[]" : in.functions_json);
  w.key("function_memory").raw(in.function_memory_json.empty() ? "null" : in.function_memory_json);
  w.key("monitor");
  if (in.monitor_json.empty())
    w.null();
  else
    w.raw(in.monitor_json);
  w.key("options").strings(opt::options_describe(*in.opt));
  w.key("warnings").strings(in.warnings);
  w.end_object();
  return w.str();
}

std::string report_path(const std::string& pattern, bool forked_child) {
  std::string out;
  bool had_pid = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(getpid());
      had_pid = true;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  if (forked_child && !had_pid) out += "." + std::to_string(getpid());
  return out;
}

namespace {

// 0644 less the process's umask, as open() would have made it; read without
// changing it (umask() is process-wide: another thread may create files).
mode_t report_mode() {
  mode_t mask = 022;
  if (FILE* f = fopen("/proc/self/status", "re")) {
    char line[128];
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "Umask: %o", &mask) == 1) break;
    fclose(f);
  }
  return 0644 & ~mask;
}

}  // namespace

void exit_write(const Input& in) {
  if (in.opt->verbose >= 1) {
    const planning::Planned* p = in.planned;
    if (p) {
      log::info(1, "%s: %d pools x %d threads on %d cores (%s); %zu threads governed",
                opt::mode_name(in.opt->mode), p->plan.pools, p->plan.threads, p->budget.cores,
                p->graph.known ? "from the model graph" : "no model graph", in.threads.size());
    } else {
      log::info(1, "not activated%s%s", in.fail_reason.empty() ? "" : ": ", in.fail_reason.c_str());
    }
  }
  if (in.opt->report.empty()) return;
  const std::string path = report_path(in.opt->report, in.forked_child);
  const std::string body = report_text(in) + "\n";
  // Never through or over something that is not a regular file: a symlink
  // (another user's, in a shared directory), a FIFO (it would block the
  // exit), a device.
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    log::warn("the report path %s is not a regular file; the report is not written", path.c_str());
    return;
  }
  // A new file of our own (O_EXCL, random name) in the target's directory, so
  // that the rename below is atomic and nobody can have prepared its name.
  const size_t slash = path.rfind('/');
  std::string tmp = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) +
                    ".parwidth-report.XXXXXX";
  int fd = mkostemp(&tmp[0], O_CLOEXEC);
  if (fd < 0) {
    log::warn("cannot write the report to %s", path.c_str());
    return;
  }
  fchmod(fd, report_mode());
  size_t off = 0;
  while (off < body.size()) {
    ssize_t n = write(fd, body.data() + off, body.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(fd);
  if (off != body.size()) {
    unlink(tmp.c_str());
    log::warn("cannot write the report to %s", path.c_str());
    return;
  }
  // A process that never activated (a shell around the real job, say) does
  // not replace a report that an activated process wrote to the same path.
  // One that tried and failed does: its report says why it ran ungoverned.
  if (!in.active && in.fail_reason.empty()) {
    if (link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST)
      log::warn("cannot write the report to %s", path.c_str());
    unlink(tmp.c_str());
    return;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    log::warn("cannot write the report to %s", path.c_str());
  }
}

}  // namespace pw::report
