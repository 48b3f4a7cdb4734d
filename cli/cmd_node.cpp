// `parwidth node [--json] [--watch SECONDS] [--dir DIR]`: the governed processes
// that share this node for this user, as the node registry lists them.
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/json.h"
#include "core/node.h"
#include "governor/node_share.h"
#include "topology/topology.h"

namespace {

constexpr const char* kUsage =
    "usage: parwidth node [--json] [--watch SECONDS] [--dir DIR]\n"
    "\n"
    "Lists the governed processes of this user that take a share of this node now\n"
    "(members of the node registry: busy with parallel work, no launcher describes\n"
    "them): pid, program, the cores each may use before the node is divided, its\n"
    "share (the division every member computes from the same list), its plan in\n"
    "force (pools x threads per pool), whether its monitor judged it oversubscribed\n"
    "at its last sample (yes/no; - without a monitor, or from an older parwidth),\n"
    "whether it serves requests (an event loop of it waits for them; cores that only\n"
    "servers share are shared by time, each server as wide as all of them: its\n"
    "SHARE ends in \"(time)\"), its threads and since when it is a member. Stale\n"
    "entries (dead or exec'ed owners) are removed.\n"
    "  --json           one JSON object instead of a table\n"
    "  --watch SECONDS  print again every SECONDS until interrupted\n"
    "  --dir DIR        the registry's directory (default: PARWIDTH_NODE_DIR, else\n"
    "                   /dev/shm/parwidth-<uid>, else /tmp/parwidth-<uid>; where\n"
    "                   that one is unusable, $XDG_RUNTIME_DIR/parwidth, as the\n"
    "                   governed processes do)\n";

void usage(FILE* f) {
  fputs(kUsage, f);
}

struct Row {
  long pid = 0;
  std::string program;
  std::vector<int> cores, share;
  int pools = 0, threads = 0;  // its plan; 0: not said (an older parwidth's entry)
  int oversubscribed = -1;     // -1: not said
  bool serves = false;         // an event loop of it waits for requests
  bool time_shared = false;    // its share is shared by time with other servers
  int thread_count = 0;        // its threads now
  double member_s = -1;        // seconds since it joined (its entry was written, for older ones)
};

std::string read_small(const std::string& path) {
  FILE* f = fopen(path.c_str(), "re");
  if (!f) return "";
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

int threads_count(long pid) {
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!d) return 0;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

bool collect(const std::string& dir, std::vector<Row>* rows, std::string* err) {
  pw::node::Registry reg;
  if (!reg.open(dir, err)) return false;
  pw::node::ScanResult s;
  if (!reg.scan(&s)) {
    *err = "cannot read " + dir;
    return false;
  }
  // members[s.self] is this command itself (not published, no cores).
  std::vector<pw::gov::NodeMember> members;
  for (size_t i = 0; i < s.members.size(); ++i)
    if (i != s.self) members.push_back(s.members[i]);
  const time_t now = time(nullptr);
  for (size_t i = 0; i < members.size(); ++i) {
    const pw::gov::NodeMember& m = members[i];
    Row r;
    r.pid = m.pid;
    r.program = read_small("/proc/" + std::to_string(m.pid) + "/comm");
    for (const pw::gov::NodeCore& c : m.cores) r.cores.push_back(c.cpu);
    const pw::gov::NodeShare share = pw::gov::node_share(members, i);
    r.share = share.cpus;
    r.time_shared = share.time_shared;
    r.serves = m.serves;
    r.pools = m.pools;
    r.threads = m.threads;
    r.oversubscribed = m.oversubscribed;
    r.thread_count = threads_count(m.pid);
    struct stat st;
    const std::string entry = dir + "/" + std::to_string(m.pid) + "." + std::to_string(m.start);
    if (m.joined > 0)
      r.member_s = difftime(now, static_cast<time_t>(m.joined));
    else if (stat(entry.c_str(), &st) == 0)
      r.member_s = difftime(now, st.st_mtime);
    if (r.member_s < 0) r.member_s = 0;  // clocks: never "joined in the future"
    rows->push_back(std::move(r));
  }
  return true;
}

void table_print(const std::string& dir, const std::vector<Row>& rows) {
  std::printf("node registry %s: %zu member%s\n", dir.c_str(), rows.size(),
              rows.size() == 1 ? "" : "s");
  if (rows.empty()) return;
  std::printf("%-8s %-16s %-12s %-18s %-7s %-8s %-6s %7s  %s\n", "PID", "PROGRAM", "CORES", "SHARE",
              "PLAN", "OVERSUB", "SERVES", "THREADS", "MEMBER FOR");
  for (const Row& r : rows) {
    char since[32] = "-";
    if (r.member_s >= 0) snprintf(since, sizeof since, "%.0f s", r.member_s);
    char plan[32] = "-";
    if (r.pools > 0) snprintf(plan, sizeof plan, "%dx%d", r.pools, r.threads);
    const char* over = r.oversubscribed < 0 ? "-" : r.oversubscribed ? "yes" : "no";
    const std::string share = pw::topo::cpulist_format(r.share) + (r.time_shared ? " (time)" : "");
    std::printf("%-8ld %-16s %-12s %-18s %-7s %-8s %-6s %7d  %s\n", r.pid, r.program.c_str(),
                pw::topo::cpulist_format(r.cores).c_str(), share.c_str(), plan, over,
                r.serves ? "yes" : "no", r.thread_count, since);
  }
}

std::string to_json(const std::string& dir, const std::vector<Row>& rows) {
  pw::json::Writer w;
  w.begin_object().key("dir").value(dir).key("members").begin_array();
  for (const Row& r : rows) {
    w.begin_object();
    w.key("pid").value(r.pid);
    w.key("program").value(r.program);
    w.key("cores").ints(r.cores);
    w.key("share").ints(r.share);
    w.key("plan");
    if (r.pools > 0)
      w.begin_object().key("pools").value(r.pools).key("intra").value(r.threads).end_object();
    else
      w.null();
    w.key("oversubscribed");
    if (r.oversubscribed >= 0)
      w.value(r.oversubscribed == 1);
    else
      w.null();
    w.key("serves").value(r.serves);
    w.key("time_shared").value(r.time_shared);
    w.key("threads").value(r.thread_count);
    w.key("member_s").value_or_null(r.member_s >= 0, r.member_s);
    w.end_object();
  }
  w.end_array().end_object();
  return w.str();
}

// The registry the governed processes use, in the order they try the
// directories: the first that opens is theirs (a default another user squats
// is passed over, *errors says why); one not made yet lists nobody. False
// when none can be read.
bool registry_listing(const std::vector<std::string>& dirs, std::vector<Row>* rows,
                      std::string* dir, std::string* errors) {
  for (const std::string& d : dirs) {
    *dir = d;
    struct stat st;
    if (stat(d.c_str(), &st) != 0) return true;  // no governed process has used it yet
    std::string err;
    rows->clear();
    if (collect(d, rows, &err)) return true;
    *errors += (errors->empty() ? "" : "; ") + err;
  }
  return false;
}

}  // namespace

int pw_cmd_node(int argc, char** argv) {
  bool json = false;
  std::string dir_opt;
  int watch_s = 0;
  const char* env_dir = getenv("PARWIDTH_NODE_DIR");
  if (env_dir) dir_opt = env_dir;
  const std::vector<pw::cli::Option> opts = {pw::cli::flag("--json", &json),
                                             pw::cli::text("--dir", &dir_opt),
                                             pw::cli::count("--watch", 1, 3600, &watch_s)};
  if (const int rc =
          pw::cli::options_scan("parwidth node", argc, argv, opts, pw::cli::Ends::kNoRest, usage);
      rc >= 0)
    return rc;
  const std::vector<std::string> dirs = pw::node::candidate_dirs(dir_opt);
  for (bool first = true;; first = false) {
    std::vector<Row> rows;
    std::string dir, errors;
    if (!registry_listing(dirs, &rows, &dir, &errors)) {
      fprintf(stderr, "parwidth node: %s\n", errors.c_str());
      return 1;
    }
    if (!errors.empty() && first)
      fprintf(stderr, "parwidth node: the default registry is unusable (%s); listing %s\n",
              errors.c_str(), dir.c_str());
    if (json)
      std::printf("%s\n", to_json(dir, rows).c_str());
    else
      table_print(dir, rows);
    fflush(stdout);
    if (watch_s <= 0) return 0;
    sleep(static_cast<unsigned>(watch_s));
    if (!json) std::printf("\n");
  }
}
