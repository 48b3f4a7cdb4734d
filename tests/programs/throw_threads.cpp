// tests/programs/throw_threads.cpp: exceptions thrown and caught in several
// std::threads (and in main), with deterministic output. Under a preload that
// replaced the host's unwinder (_Unwind_*), this would crash or misbehave.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

struct Custom {
  int code;
};

int depth_throw(int depth, int id) {
  if (depth == 0) {
    if (id % 3 == 0) throw std::runtime_error("thread " + std::to_string(id));
    if (id % 3 == 1) throw Custom{id * 10};
    throw std::system_error(std::make_error_code(std::errc::invalid_argument));
  }
  return depth_throw(depth - 1, id) + 1;
}

int caught_in(int id) {
  int caught = 0;
  for (int round = 0; round < 200; ++round) {
    try {
      depth_throw(5 + round % 7, id);
    } catch (const std::runtime_error&) {
      ++caught;
    } catch (const Custom& c) {
      if (c.code == id * 10) ++caught;
    } catch (const std::exception&) {
      ++caught;
    }
  }
  // Nested: a rethrow from a catch handler, and an exception crossing a join.
  try {
    try {
      throw std::logic_error("inner");
    } catch (...) {
      throw;
    }
  } catch (const std::logic_error&) {
    ++caught;
  }
  return caught;
}

}  // namespace

int main() {
  const int n = 6;
  std::vector<int> results(n, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back([&results, i] { results[i] = caught_in(i); });
  for (auto& t : threads) t.join();
  int total = 0;
  for (int i = 0; i < n; ++i) {
    std::printf("thread %d caught %d\n", i, results[i]);
    total += results[i];
  }
  try {
    std::vector<int> v;
    (void)v.at(3);
  } catch (const std::out_of_range&) {
    std::printf("main caught out_of_range\n");
  }
  std::printf("total %d\n", total);
  return total == n * 201 ? 0 : 1;
}
