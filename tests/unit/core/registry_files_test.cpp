// core/node: the registry directory and entries — permissions, stale entries
// (dead pid, reused pid, released lock), concurrent members, leaving.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "core/node.h"

namespace pw::node {
namespace {

struct TempDir {
  std::string base;
  TempDir() {
    char t[] = "/tmp/pw-node-test-XXXXXX";
    base = mkdtemp(t);
  }
  ~TempDir() { (void)!system(("rm -rf " + base).c_str()); }
  std::string dir() const { return base + "/reg"; }
};

gov::NodeMember me(std::vector<gov::NodeCore> cores = {{0, 0}, {0, 1}}) {
  gov::NodeMember m;
  m.pid = getpid();
  EXPECT_TRUE(proc_start_time(m.pid, &m.start));
  m.cores = std::move(cores);
  return m;
}

int count_entries(const std::string& dir) {
  std::string cmd = "ls -A " + dir + " | wc -l";
  FILE* f = popen(cmd.c_str(), "r");
  int n = -1;
  if (f) {
    if (fscanf(f, "%d", &n) != 1) n = -1;
    pclose(f);
  }
  return n;
}

// A child process that publishes itself and waits for a byte on a pipe (or exits at once
// without leaving, like a crash). Returns its pid; `go` is the write end.
pid_t spawn_member(const std::string& dir, bool crash, int* go) {
  int ready[2], wait_fd[2];
  EXPECT_EQ(pipe(ready), 0);
  EXPECT_EQ(pipe(wait_fd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    Registry r;
    std::string err;
    gov::NodeMember m;
    m.pid = getpid();
    proc_start_time(m.pid, &m.start);
    m.cores = {{0, 0}, {0, 1}};
    bool ok = r.open(dir, &err) && r.publish(m, &err);
    char c = ok ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    if (crash) _exit(0);  // no leave(): the entry stays behind
    (void)!read(wait_fd[0], &c, 1);
    r.leave();
    _exit(0);
  }
  char c = 0;
  EXPECT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_EQ(c, 'y');
  close(ready[0]);
  close(ready[1]);
  close(wait_fd[0]);
  *go = wait_fd[1];
  return pid;
}

TEST(NodeEntry, FormatParseRoundTrip) {
  gov::NodeMember m{1234, 98765, {{0, 0}, {1, 24}, {1, 25}}};
  gov::NodeMember back;
  ASSERT_TRUE(entry_parse(entry_format(m), &back));
  EXPECT_EQ(back.pid, 1234);
  EXPECT_EQ(back.start, 98765u);
  ASSERT_EQ(back.cores.size(), 3u);
  EXPECT_EQ(back.cores[1].socket, 1);
  EXPECT_EQ(back.cores[2].cpu, 25);
  EXPECT_EQ(back.pools, 0);
  EXPECT_EQ(back.oversubscribed, -1);
  for (const char* bad :
       {"", "parwidth-node 1 ", "parwidth-node 1 12 34 ", "parwidth-node 3 1 2 0:0",
        "parwidth-node 1 1 2 0:x", "parwidth-node 1 -1 2 0:0", "parwidth-node 1 1 2 0:0;1:1",
        "parwidth-node 2 1 2 0:0 plan=2", "parwidth-node 2 1 2 0:0 oversubscribed=7",
        "parwidth-node 2 1 2 0:0 joined", "parwidth-node 1 1 2 0:0 plan=1x2"})
    EXPECT_FALSE(entry_parse(bad, &back)) << bad;
}

// Version 2 keeps the plan, the monitor's verdict and the join time; version 1
// entries (an older parwidth on the same node) still read, without them.
TEST(NodeEntry, VersionTwoFieldsAndVersionOne) {
  gov::NodeMember m{77, 5, {{0, 2}, {0, 3}}};
  m.pools = 2;
  m.threads = 3;
  m.oversubscribed = 1;
  m.joined = 1700000000;
  m.serves = true;
  gov::NodeMember back;
  const std::string text = entry_format(m);
  EXPECT_EQ(text.compare(0, 16, "parwidth-node 2 "), 0) << text;
  ASSERT_TRUE(entry_parse(text, &back)) << text;
  EXPECT_EQ(back.pid, 77);
  ASSERT_EQ(back.cores.size(), 2u);
  EXPECT_EQ(back.cores[1].cpu, 3);
  EXPECT_EQ(back.pools, 2);
  EXPECT_EQ(back.threads, 3);
  EXPECT_EQ(back.oversubscribed, 1);
  EXPECT_EQ(back.joined, 1700000000);
  EXPECT_TRUE(back.serves);
  // An older version 2 entry (no serves=): not a server; a malformed one is refused.
  ASSERT_TRUE(entry_parse("parwidth-node 2 9 8 0:0 plan=1x1 oversubscribed=0 joined=5\n", &back));
  EXPECT_FALSE(back.serves);
  for (const char* bad : {"parwidth-node 2 9 8 0:0 serves=2\n", "parwidth-node 2 9 8 0:0 serves=\n",
                          "parwidth-node 2 9 8 0:0 serves=11\n"})
    EXPECT_FALSE(entry_parse(bad, &back)) << bad;
  ASSERT_TRUE(entry_parse("parwidth-node 1 9 8 0:0,0:1\n", &back));
  EXPECT_EQ(back.pid, 9);
  EXPECT_EQ(back.cores.size(), 2u);
  EXPECT_EQ(back.pools, 0);
  EXPECT_EQ(back.oversubscribed, -1);
  EXPECT_EQ(back.joined, 0);
  // A later version's extra keys are skipped.
  ASSERT_TRUE(entry_parse("parwidth-node 2 9 8 0:0 plan=1x1 future=abc oversubscribed=0\n", &back));
  EXPECT_EQ(back.oversubscribed, 0);
}

TEST(NodeEntry, StartTimeOfThisProcess) {
  unsigned long long a = 0, b = 0;
  ASSERT_TRUE(proc_start_time(getpid(), &a));
  ASSERT_TRUE(proc_start_time(getpid(), &b));
  EXPECT_EQ(a, b);
  EXPECT_GT(a, 0u);
  EXPECT_FALSE(proc_start_time(999999999, &a));
}

TEST(NodeDir, CreatedPrivateAndChecked) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err)) << err;
  struct stat st;
  ASSERT_EQ(lstat(t.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_TRUE(r.publish(me(), &err)) << err;
  const std::string entry =
      t.dir() + "/" + std::to_string(getpid()) + "." + std::to_string(me().start);
  ASSERT_EQ(lstat(entry.c_str(), &st), 0) << entry;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  r.leave();
  EXPECT_EQ(count_entries(t.dir()), 0);
}

TEST(NodeDir, RefusesSymlinkOpenModeAndForeignOwner) {
  TempDir t;
  std::string err;
  ASSERT_EQ(mkdir((t.base + "/real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((t.base + "/real").c_str(), t.dir().c_str()), 0);
  Registry r;
  EXPECT_FALSE(r.open(t.dir(), &err));
  EXPECT_NE(err.find("symbolic link"), std::string::npos) << err;

  const std::string dir_open = t.base + "/open";
  ASSERT_EQ(mkdir(dir_open.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir_open.c_str(), 0777), 0);
  EXPECT_FALSE(r.open(dir_open, &err));
  EXPECT_NE(err.find("accessible to others"), std::string::npos) << err;

  if (geteuid() == 0) {
    const std::string foreign = t.base + "/foreign";
    ASSERT_EQ(mkdir(foreign.c_str(), 0700), 0);
    ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(r.open(foreign, &err));
    EXPECT_NE(err.find("belongs to uid"), std::string::npos) << err;
  }
}

TEST(NodeScan, SeesALiveMemberAndForgetsItWhenItLeaves) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  int go = -1;
  pid_t child = spawn_member(t.dir(), false, &go);
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  ASSERT_EQ(s.members.size(), 2u);
  EXPECT_EQ(s.members[s.self].pid, getpid());
  EXPECT_EQ(s.members[1 - s.self].pid, child);
  EXPECT_EQ(s.reclaimed, 0);
  (void)!write(go, "x", 1);
  close(go);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(r.scan(&s));
  EXPECT_EQ(s.members.size(), 1u);
  EXPECT_EQ(s.reclaimed, 0);  // it removed its own entry
  r.leave();
  EXPECT_EQ(count_entries(t.dir()), 0);
}

TEST(NodeScan, ReclaimsACrashedMember) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  int go = -1;
  pid_t child = spawn_member(t.dir(), true, &go);
  int status = 0;
  waitpid(child, &status, 0);
  close(go);
  EXPECT_EQ(count_entries(t.dir()), 2);
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  EXPECT_EQ(s.members.size(), 1u);
  EXPECT_EQ(s.reclaimed, 1);
  EXPECT_EQ(count_entries(t.dir()), 1);
  r.leave();
}

TEST(NodeScan, ReclaimsAReusedPid) {
  // pid 1 is alive but started at another time than the entry says.
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  unsigned long long init_start = 0;
  ASSERT_TRUE(proc_start_time(1, &init_start));
  const std::string name = t.dir() + "/1." + std::to_string(init_start + 12345);
  int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);  // even a held lock does not keep a wrong start time
  const std::string text = entry_format({1, init_start + 12345, {{0, 0}}});
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  EXPECT_EQ(s.members.size(), 1u);
  EXPECT_EQ(s.reclaimed, 1);
  close(fd);
  r.leave();
}

TEST(NodeScan, ReclaimsAnEntryWhoseLockIsFree) {
  // A live process whose entry nobody holds (it exec'ed into a program that did not join).
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  unsigned long long start = 0;
  for (int i = 0; i < 100 && !proc_start_time(child, &start); ++i) usleep(1000);
  const std::string name = t.dir() + "/" + std::to_string(child) + "." + std::to_string(start);
  int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  const std::string text = entry_format({child, start, {{0, 0}}});
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  EXPECT_EQ(s.members.size(), 1u);
  EXPECT_EQ(s.reclaimed, 1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  r.leave();
}

TEST(NodeScan, RepublishesItsOwnEntryWhenRemoved) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  ASSERT_EQ(system(("rm -f " + t.dir() + "/*").c_str()), 0);
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  EXPECT_TRUE(s.republished);
  EXPECT_EQ(count_entries(t.dir()), 1);
  r.leave();
  EXPECT_EQ(count_entries(t.dir()), 0);
}

TEST(NodeScan, ForkChildDoesNotRemoveTheParentsEntry) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  pid_t child = fork();
  if (child == 0) {
    r.forget_after_fork();
    r.leave();
    _exit(0);
  }
  waitpid(child, nullptr, 0);
  EXPECT_EQ(count_entries(t.dir()), 1);
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  EXPECT_FALSE(s.republished);  // the parent still holds its lock
  r.leave();
  EXPECT_EQ(count_entries(t.dir()), 0);
}

TEST(NodeScan, ManyConcurrentArrivalsAllSeeEachOther) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  std::vector<pid_t> kids;
  std::vector<int> gos;
  for (int i = 0; i < 8; ++i) {
    int go = -1;
    kids.push_back(spawn_member(t.dir(), false, &go));
    gos.push_back(go);
  }
  ScanResult s;
  ASSERT_TRUE(r.scan(&s));
  EXPECT_EQ(s.members.size(), 9u);
  for (int go : gos) {
    (void)!write(go, "x", 1);
    close(go);
  }
  for (pid_t k : kids) waitpid(k, nullptr, 0);
  ASSERT_TRUE(r.scan(&s));
  EXPECT_EQ(s.members.size(), 1u);
  r.leave();
  EXPECT_EQ(count_entries(t.dir()), 0);
}

// A member rewrites its entry (a new plan, a new verdict): a new file under a
// temporary name, locked, renamed into place, and only then the old file's lock
// let go. A scanner that opened the old file just before the rename can take
// its lock just after: it must read the new file, not drop the member.
TEST(NodeScan, AMemberRewritingItsEntryIsListedInEveryScan) {
  TempDir t;
  Registry r;
  std::string err;
  ASSERT_TRUE(r.open(t.dir(), &err) && r.publish(me(), &err)) << err;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t writer = fork();
  if (writer == 0) {
    Registry w;
    gov::NodeMember m;
    m.pid = getpid();
    proc_start_time(m.pid, &m.start);
    m.cores = {{0, 2}, {0, 3}};
    std::string e;
    char c = w.open(t.dir(), &e) && w.publish(m, &e) ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    for (int i = 0;; ++i) {
      m.oversubscribed = i % 2;
      if (!w.publish(m, &e)) _exit(1);
    }
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  ASSERT_EQ(c, 'y');
  int missed = 0;
  const int scans = 20000;
  for (int i = 0; i < scans; ++i) {
    ScanResult s;
    ASSERT_TRUE(r.scan(&s));
    bool listed = false;
    for (const gov::NodeMember& m : s.members) listed = listed || m.pid == writer;
    missed += listed ? 0 : 1;
  }
  kill(writer, SIGKILL);
  waitpid(writer, nullptr, 0);
  EXPECT_EQ(missed, 0) << "of " << scans << " scans while the member rewrote its entry";
  r.leave();
}

}  // namespace
}  // namespace pw::node
