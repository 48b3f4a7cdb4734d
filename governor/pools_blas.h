// governor/pools_blas: the thread pools that BLAS libraries (OpenBLAS, MKL,
// BLIS) keep beside OpenMP's. Pure: hooks/blas.cpp finds the libraries, reads
// their counts and the user's choices, asks, sets and notes.
//
// parwidth only caps a BLAS pool (governor/setting's kCap): the plan's threads
// per pool where the library's count is larger, a smaller count left as it
// is. A pool parwidth capped, or left at the library's default within the cap,
// is not the user's: it follows later plans (the node divided again), never
// above the library's own size. A pool the user sized stays. On cores shared
// by time with other servers, the cap is the team's worth (PoolContext's
// team_cap): a BLAS pool splits each product into fixed parts, one per
// thread, and waits for the last of them, as an OpenMP team does.
#pragma once

#include "governor/pools.h"

namespace pw::gov {

struct BlasPoolFacts {
  int count = 0;          // the library's count when found (its getter; <= 0: unknown)
  int unset = 0;          // the count a getter value <= 0 stands for (BLIS: 1); 0: unknown
  bool user_set = false;  // the user sized it: the library's environment variables,
                          // or its own set call seen by our hooks
};

struct BlasPoolDecision {
  SettingDecision setting;  // the cap; setting.value is the pool's size afterwards
  int before = 0;           // the library's own size (<= 0: unknown)
  bool follows = false;     // not the user's: it follows later plans (blas_follow_size)
};

// A pool found by a sweep.
BlasPoolDecision blas_pool_decide(const PoolContext& c, const BlasPoolFacts& f);

// The size a following pool gets under a plan of `threads` per pool: the
// plan's, never above the library's own size `before` (<= 0: unknown).
int blas_follow_size(int threads, int before);

// The threads per pool BLAS pools are capped at: the plan's, within team_cap.
int blas_cap_threads(int threads, int team_cap);

// The user's own set call with `n` threads: kept unless PARWIDTH_OVERRIDE=1.
SettingDecision blas_call_decide(const PoolContext& c, int n);

}  // namespace pw::gov
