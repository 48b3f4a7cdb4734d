// topology/affinity: reading and setting a thread's CPU mask — the one place
// parwidth calls sched_{get,set}affinity or fills a thread attribute's mask.
//
// Error contract (every function here): returns 0, or an errno value and
// changes nothing. ENOMEM: the mask could not be allocated. EINVAL: the list
// holds no valid CPU, or the kernel refuses the mask (no allowed CPU in it).
// ESRCH: no such thread. Any other value is the kernel's. `tid` 0 is the
// calling thread. CPU lists are OS indices; lists read back are ascending.
//
// Two sizes: the list functions take any CPU count (CPU_ALLOC) and allocate.
// The Fixed functions use a cpu_set_t (the first CPU_SETSIZE = 1024 CPUs) and
// allocate nothing, take no lock and throw nothing: they are for paths where
// no allocation is allowed (an exec hook in a vfork child). On a machine
// whose kernel mask is wider than 1024 CPUs affinity_get_fixed fails with
// EINVAL, and the caller leaves the mask as it is.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

#include <vector>

namespace pw::topo {

int affinity_get(pid_t tid, std::vector<int>* cpus);
int affinity_set(pid_t tid, const std::vector<int>& cpus);
// The mask a thread created with `attr` starts on (pthread_attr_setaffinity_np).
int affinity_attr_set(pthread_attr_t* attr, const std::vector<int>& cpus);

int affinity_get_fixed(pid_t tid, cpu_set_t* set) noexcept;
int affinity_set_fixed(pid_t tid, const cpu_set_t& set) noexcept;

}  // namespace pw::topo
