"""tests/programs/blas_pools.py: a BLAS library's thread pool, seen three ways.

Runs C = A @ B (float64, n x n, a few times) through one BLAS library and
prints one JSON object: threadpoolctl's threadpool_info(), the sum of C, the
process's threads in /proc, and how many of them did work during the
multiplications (CPU time in /proc/self/task/*/schedstat grew by at least a
third of the busiest thread's), which is the pool size the library actually used.

  --lib numpy     numpy's own BLAS (a wheel's bundled OpenBLAS, or Debian's)
  --lib mkl       MKL's mkl_rt (--mkl PATH), through cblas_dgemm
  --lib blis      BLIS (--blis PATH), through cblas_dgemm
  --set N         call the library's own set-threads function with N first
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np

CblasRowMajor, CblasNoTrans = 101, 111


def cpu_ticks():
    """Each thread's CPU time in ns (schedstat), keyed by tid, with its name."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
        except (OSError, ValueError, IndexError):
            continue
        out[int(tid)] = (comm, ns)
    return out


def dgemm_with(lib):
    fn = lib.cblas_dgemm
    fn.restype = None
    i, d, p = ctypes.c_int, ctypes.c_double, ctypes.c_void_p
    fn.argtypes = [i, i, i, i, i, i, d, p, i, p, i, d, p, i]

    def mm(a, b):
        n = a.shape[0]
        c = np.zeros((n, n))
        fn(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.ctypes.data, n,
           b.ctypes.data, n, 0.0, c.ctypes.data, n)
        return c

    return mm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=["numpy", "mkl", "blis"], default="numpy")
    ap.add_argument("--mkl")
    ap.add_argument("--blis")
    ap.add_argument("--set", type=int, default=0)
    ap.add_argument("--n", type=int, default=700)
    ap.add_argument("--reps", type=int, default=6)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.n, args.n))
    b = rng.standard_normal((args.n, args.n))
    lib = None
    if args.lib == "numpy":
        mm = np.matmul
    else:
        lib = ctypes.CDLL(args.mkl if args.lib == "mkl" else args.blis)
        mm = dgemm_with(lib)
    if args.set:
        name = {"mkl": "MKL_Set_Num_Threads", "blis": "bli_thread_set_num_threads"}.get(
            args.lib, "openblas_set_num_threads")
        setter = getattr(lib if lib is not None else ctypes.CDLL(None), name)
        setter.argtypes = [ctypes.c_long if args.lib == "blis" else ctypes.c_int]
        setter(args.set)

    import threadpoolctl

    mm(a, b)  # warm-up: pools that start lazily start now
    # OpenBLAS's workers spin for about 0.1 s after they start (and after each
    # product) before they sleep, whatever the thread count: let that pass, or
    # an idle worker's spin is counted as work.
    time.sleep(0.3)
    import threading

    rest = len(os.listdir("/proc/self/task"))
    peak = [rest]
    done = threading.Event()

    def sample():  # BLIS starts its threads per call: count them while they live
        while not done.is_set():
            peak[0] = max(peak[0], len(os.listdir("/proc/self/task")) - 1)
            done.wait(0.0005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    before = cpu_ticks()
    total = 0.0
    for _ in range(args.reps):
        total += float(mm(a, b).sum())
    after = cpu_ticks()
    done.set()
    sampler.join()
    # A thread did the work if it took a real part of it: a worker that spun a
    # little while the others worked is not a share.
    grown = {tid: t - before[tid][1] for tid, (comm, t) in after.items()
             if comm != "parwidth-mon" and tid in before and tid != sampler.native_id}
    names = {tid: after[tid][0] for tid in grown}
    most = max(grown.values(), default=0)
    busy = [tid for tid, g in grown.items() if g > 0 and g * 3 >= most]
    info = [{"internal_api": i["internal_api"], "prefix": i["prefix"],
             "file": os.path.basename(i["filepath"]), "num_threads": i["num_threads"],
             "threading_layer": i.get("threading_layer")}
            for i in threadpoolctl.threadpool_info()]
    json.dump({"pid": os.getpid(), "sum": total, "tasks": rest, "busy": len(busy),
               "cpu_ms": sorted(((round(g / 1e6, 1), names[t]) for t, g in grown.items()), reverse=True),
               "started_per_call": peak[0] - rest,
               "threadpoolctl": info}, sys.stdout)


if __name__ == "__main__":
    main()
