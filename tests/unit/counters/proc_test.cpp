// /proc reader: every thread of the process, with its run-queue delay, switches and affinity.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

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

}  // namespace
}  // namespace pw::counters
