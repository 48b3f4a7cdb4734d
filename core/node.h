// core/node: the node registry — one small file per governed process that
// no launcher describes, so that such processes divide the node's cores.
//
// Layout: a per-user directory (PARWIDTH_NODE_DIR, else /dev/shm/parwidth-<uid>,
// else /tmp/parwidth-<uid>), created 0700 and used only if it is a real
// directory (not a symlink) owned by us with no group/other permissions. Each
// member writes "<pid>.<start>" (start = its start time from /proc/<pid>/stat,
// so a reused pid is not mistaken for it) with mode 0600 and O_NOFOLLOW: it is
// written under a temporary name, locked (flock LOCK_EX, held for the
// process's life on a close-on-exec descriptor) and renamed into place, so a
// reader never sees half an entry and two arrivals need no lock file.
//
// An entry is stale when its pid is gone, its pid now belongs to a process
// with another start time, or its lock can be taken (the owner died, or
// exec'ed into something that did not join): any scanner unlinks it. Nothing
// here blocks (LOCK_NB everywhere) or throws; failures return false and the
// caller runs with the share it has.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "governor/node_share.h"

namespace pw::node {

// The registry directory for this user: dir_opt if not empty, else
// /dev/shm/parwidth-<euid> when /dev/shm is a writable directory, else
// /tmp/parwidth-<euid>.
std::string default_dir(const std::string& dir_opt);

// Where to look for the registry, in order: the option's directory alone
// when set; otherwise the default one, then $XDG_RUNTIME_DIR/parwidth (the
// user's own tmpfs, which nobody else can squat or fill) when that is set.
std::vector<std::string> candidate_dirs(const std::string& dir_opt);

// Field 22 of /proc/<pid>/stat (clock ticks since boot); false if unreadable.
bool proc_start_time(long pid, unsigned long long* out);

// One line: "parwidth-node 2 <pid> <start> <socket>:<cpu>,<socket>:<cpu>,...
// plan=<pools>x<intra> oversubscribed=<-1|0|1> joined=<unix seconds> serves=<0|1>".
// Version 1 (without the fields) is still read, and version 2 without serves=
// (an older parwidth's: not a server).
std::string entry_format(const gov::NodeMember& m);
bool entry_parse(const std::string& text, gov::NodeMember* out);

struct ScanResult {
  std::vector<gov::NodeMember> members;  // live members, this process included
  size_t self = 0;                       // index of this process in members
  int reclaimed = 0;                     // stale entries removed by this scan
  bool republished = false;              // our own entry was missing and was written again
};

class Registry {
 public:
  // Creates (0700) and checks the directory. false with *err when unusable.
  bool open(const std::string& dir, std::string* err);
  // Publishes this process (self.pid must be getpid()), or rewrites its entry
  // (a new plan, a new verdict). false with *err.
  bool publish(const gov::NodeMember& self, std::string* err);
  // Lists live members and reclaims stale entries. false when the directory
  // cannot be read (then *out is untouched).
  bool scan(ScanResult* out);
  // Removes our entry and releases its lock (normal exit).
  void leave();
  // In a fork child: the entry is the parent's. Drops the inherited lock
  // descriptor (if it is still ours) without touching the entry.
  void forget_after_fork();

  bool published() const { return published_; }
  const gov::NodeMember& self() const { return self_; }
  const std::string& dir() const { return dir_; }

 private:
  int dir_open() const;  // a checked descriptor of dir_, or -1
  bool entry_write(int dirfd, std::string* err);
  bool lock_fd_is_ours() const;
  void lock_fd_close();

  std::string dir_;
  gov::NodeMember self_;
  std::string name_;
  int lock_fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool published_ = false;
};

}  // namespace pw::node
