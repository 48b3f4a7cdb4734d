// tests/programs/ctor_thread_lib.cpp: a plug-in whose constructor (run by
// dlopen, under the loader's lock) starts a thread and waits for it. That
// thread starts a std::thread and runs a parallel region (libgomp reachable
// only from this RTLD_LOCAL plug-in): nothing on its way may wait for the
// loader's lock, or the two wait for each other forever.
#include <omp.h>
#include <pthread.h>

#include <atomic>
#include <thread>

namespace {

std::atomic<int> g_done{0};

void* inner(void*) {
  std::thread t([] { g_done.fetch_add(1); });
  t.join();
  int n = 0;
#pragma omp parallel reduction(+ : n)
  n += 1;
  if (n > 0) g_done.fetch_add(1);
  return nullptr;
}

__attribute__((constructor)) void start_and_wait() {
  pthread_t t;
  if (pthread_create(&t, nullptr, inner, nullptr) == 0) pthread_join(t, nullptr);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pw_ctor_done() {
  return g_done.load();
}
