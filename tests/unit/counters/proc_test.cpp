// /proc reader: every thread of the process, with its run-queue delay, switches and affinity.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "counters/counters.h"
#include "tests/unit/counters/test_util.h"

namespace pw::counters {
namespace {

// k threads that publish their tid and sleep until released.
struct Sleepers {
  explicit Sleepers(int k) {
    for (int i = 0; i < k; ++i) {
      threads.emplace_back([this] {
        std::unique_lock<std::mutex> l(m);
        tids.push_back(static_cast<pid_t>(syscall(SYS_gettid)));
        cv.notify_all();
        cv.wait(l, [this] { return done; });
      });
    }
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return tids.size() == static_cast<size_t>(k); });
  }
  ~Sleepers() {
    {
      std::lock_guard<std::mutex> l(m);
      done = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
  }
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::vector<pid_t> tids;
  std::vector<std::thread> threads;
};

const ThreadStat* find(const std::vector<ThreadStat>& v, size_t n, pid_t tid) {
  for (size_t i = 0; i < n; ++i) {
    if (v[i].tid == tid) return &v[i];
  }
  return nullptr;
}

TEST(ProcRead, SeesEveryThreadWithItsAffinity) {
  Sleepers s(3);
  std::vector<ThreadStat> v(64);
  size_t n = 0, total = 0;
  ASSERT_EQ(proc_read_threads(ProcReadOptions{}, v.data(), v.size(), &n, &total), Status::kOk);
  EXPECT_EQ(n, total);
  EXPECT_GE(n, 4u);
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  for (pid_t tid : s.tids) {
    const ThreadStat* t = find(v, n, tid);
    ASSERT_NE(t, nullptr) << tid;
    EXPECT_GE(t->cpu, 0);
    ASSERT_TRUE(t->have_allowed);
    EXPECT_TRUE(CPU_EQUAL(&t->allowed, &mine));
  }
  const ThreadStat* self = find(v, n, static_cast<pid_t>(syscall(SYS_gettid)));
  ASSERT_NE(self, nullptr);
  EXPECT_GT(self->run_ns, 0u);
}

TEST(ProcRead, ReportsAPinnedThreadsMask) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  cpu_set_t old;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  std::thread t([&] {
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    std::vector<ThreadStat> v(64);
    size_t n = 0, total = 0;
    ASSERT_EQ(proc_read_threads(ProcReadOptions{}, v.data(), v.size(), &n, &total), Status::kOk);
    const ThreadStat* me = find(v, n, static_cast<pid_t>(syscall(SYS_gettid)));
    ASSERT_NE(me, nullptr);
    EXPECT_TRUE(CPU_EQUAL(&me->allowed, &one));
    EXPECT_EQ(me->cpu, 0);
  });
  t.join();
}

TEST(ProcRead, TooSmallATableStillCountsEveryThread) {
  Sleepers s(3);
  ThreadStat one;
  size_t n = 0, total = 0;
  ASSERT_EQ(proc_read_threads(ProcReadOptions{}, &one, 1, &n, &total), Status::kOk);
  EXPECT_EQ(n, 1u);
  EXPECT_GE(total, 4u);
}

TEST(ProcRead, SkipsTheGivenThreadAndDetailIsOptional) {
  ProcReadOptions o;
  o.skip_tid = static_cast<pid_t>(syscall(SYS_gettid));
  o.detail = false;
  std::vector<ThreadStat> v(64);
  size_t n = 0, total = 0;
  ASSERT_EQ(proc_read_threads(o, v.data(), v.size(), &n, &total), Status::kOk);
  EXPECT_EQ(find(v, n, o.skip_tid), nullptr);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_FALSE(v[i].have_allowed);
    EXPECT_EQ(v[i].cpu, -1);
  }
}

TEST(ProcRead, BadArgumentsAreErrors) {
  size_t n = 0, total = 0;
  EXPECT_EQ(proc_read_threads(ProcReadOptions{}, nullptr, 4, &n, &total), Status::kError);
  ThreadStat t;
  EXPECT_EQ(proc_read_threads(ProcReadOptions{}, &t, 1, nullptr, &total), Status::kError);
}

// A process serves connections while it holds a listening socket: TCP on
// IPv4 or IPv6, or a Unix stream socket; a connected pair or a socket that
// only connects out is no server.
TEST(ProcessListens, SeesListeningSocketsOnly) {
  if (access("/proc/self/net/tcp", R_OK) != 0 || access("/proc/self/net/unix", R_OK) != 0)
    GTEST_SKIP() << "/proc/self/net/tcp or unix is not readable here (a restricted /proc)";
  bool listens = true;
  ASSERT_EQ(process_listens(&listens), Status::kOk);
  EXPECT_FALSE(listens) << "the test binary listens on nothing";
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  const int bound = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(bound, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);  // bound, not listening
  ASSERT_EQ(process_listens(&listens), Status::kOk);
  EXPECT_FALSE(listens);
  ASSERT_EQ(listen(bound, 4), 0);
  ASSERT_EQ(process_listens(&listens), Status::kOk);
  EXPECT_TRUE(listens) << "TCP";
  close(bound);
  ASSERT_EQ(process_listens(&listens), Status::kOk);
  EXPECT_FALSE(listens);

  const int six = socket(AF_INET6, SOCK_STREAM, 0);
  if (six >= 0) {
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_loopback;
    if (bind(six, reinterpret_cast<sockaddr*>(&a6), sizeof a6) == 0 && listen(six, 4) == 0) {
      ASSERT_EQ(process_listens(&listens), Status::kOk);
      EXPECT_TRUE(listens) << "TCP6";
    }
    close(six);
  }

  const int ux = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un u{};
  u.sun_family = AF_UNIX;
  snprintf(u.sun_path, sizeof u.sun_path, "/tmp/pw-listens-%d.sock", static_cast<int>(getpid()));
  unlink(u.sun_path);
  ASSERT_EQ(bind(ux, reinterpret_cast<sockaddr*>(&u), sizeof u), 0);
  ASSERT_EQ(listen(ux, 4), 0);
  ASSERT_EQ(process_listens(&listens), Status::kOk);
  EXPECT_TRUE(listens) << "Unix";
  close(ux);
  unlink(u.sun_path);
  close(pair[0]);
  close(pair[1]);
  ASSERT_EQ(process_listens(&listens), Status::kOk);
  EXPECT_FALSE(listens);
  EXPECT_EQ(process_listens(nullptr), Status::kError);
}

}  // namespace
}  // namespace pw::counters
