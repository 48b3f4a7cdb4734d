// Helpers for the counters tests: busy threads, sampler thread lookup by name.
#pragma once

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pw::counters::testing {

// n threads spinning until destroyed: demand for n CPUs.
class BusyThreads {
 public:
  explicit BusyThreads(int n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        volatile unsigned long x = 0;
        while (!stop_.load(std::memory_order_relaxed)) x = x + 1;
      });
    }
  }
  ~BusyThreads() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// n threads that sleep until destroyed.
class IdleThreads {
 public:
  explicit IdleThreads(int n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_; });
      });
    }
  }
  ~IdleThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

inline std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// Threads of this process whose comm is `name`.
inline int threads_named(const char* name) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    n += read_line(std::string("/proc/self/task/") + e->d_name + "/comm") == name;
  }
  closedir(d);
  return n;
}

// The count once exited threads are gone: pthread_join returns when the kernel clears
// the thread's tid, a moment before its /proc/self/task entry is removed, so a thread
// just joined may still be listed. Polls for up to 2 s; a thread still running stays.
inline int threads_named_after_exit(const char* name) {
  int n = threads_named(name);
  for (int i = 0; i < 200 && n > 0; ++i) {
    usleep(10000);
    n = threads_named(name);
  }
  return n;
}

inline int allowed_cpus() {
  cpu_set_t s;
  return sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 1;
}

}  // namespace pw::counters::testing
