// base/thread_create: the type of pthread_create, for the layers that start a
// thread of their own through the real one (the monitor's sampler must not be
// governed as a program's thread).
#pragma once

#include <pthread.h>

namespace pw {

using ThreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

}  // namespace pw
