"""tests/programs/frameworks2.py: what the libraries users install today did with
their threads, seen from the kernel.

One mode per library (PyPI's torch 2.x, torch.compile's C++ kernels,
transformers, XGBoost, LightGBM, scikit-learn's grid search), each on random
weights or synthetic data from fixed seeds, no download. Prints one JSON
object:
  result     the numbers to compare with a bare run
  busy       threads that did a real part of the measured work (CPU time in
             /proc/self/task/*/schedstat grew by at least a third of the
             busiest thread's), with their name, allowed CPUs and the CPU
             each last ran on (/proc/<tid>/stat field 39): the team size the
             kernels actually used, and where it ran
  tasks      every thread alive at the end: tid, name, allowed CPUs
  runtimes   the OpenMP runtimes and BLAS libraries mapped in the process
  view       each library's own count (torch's, threadpoolctl's)

  python frameworks2.py torch|compile|bert|xgboost|lightgbm|hgb|gridsearch|turns
                        [--after MODULE]
  python frameworks2.py turns --seconds S   (prints "ready", then takes turns
                                             until S seconds have passed)
  python frameworks2.py compile [--threads N] [--go FILE] [--compile-after FILE]
        --go: prints "compiled", then runs the kernel until FILE exists;
        --compile-after: prints "ready", works until FILE exists, prints
        "compiling" and compiles
"""
import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RUNTIME_MARKS = ("gomp", "libomp", "iomp", "openblas", "mkl", "blis")


def cpu_ns():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return out


def task(tid):
    """tid, name, allowed CPUs and the CPU it last ran on; None if it ended."""
    try:
        with open(f"/proc/self/task/{tid}/stat") as f:
            stat = f.read()
        with open(f"/proc/self/task/{tid}/comm") as f:
            comm = f.read().strip()
        cpus = sorted(os.sched_getaffinity(tid))
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return {"tid": tid, "comm": comm, "cpus": cpus, "last_cpu": int(fields[36])}


def busy_during(work):
    """Runs work(); returns (its result, the threads that did a real part of it)."""
    before = cpu_ns()
    result = work()
    after = cpu_ns()
    grown = {t: ns - before[t] for t, ns in after.items() if t in before}
    most = max(grown.values(), default=0)
    busy = [task(t) for t, g in grown.items() if g > 0 and g * 3 >= most]
    busy = [b for b in busy if b and b["comm"] != "parwidth-mon"]
    return result, busy


def runtimes():
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if path.startswith("/") and any(m in os.path.basename(path) for m in RUNTIME_MARKS):
                found.add(os.path.realpath(path))
    return sorted(found)


def blas_info():
    from threadpoolctl import threadpool_info
    return [{"api": i.get("internal_api"), "file": os.path.basename(i["filepath"]),
             "threads": i.get("num_threads")} for i in threadpool_info()]


# ------------------------------------------------------------------ the modes


def torch_mode(a):
    import torch

    @torch.jit.script
    def half(x: torch.Tensor) -> torch.Tensor:
        return x * 0.5

    @torch.jit.script
    def forked(x: torch.Tensor) -> torch.Tensor:
        futs = [torch.jit.fork(half, x + float(i)) for i in range(4)]
        total = torch.zeros_like(x)
        for f in futs:
            total = total + torch.jit.wait(f)
        return total

    g = torch.Generator().manual_seed(0)
    x = torch.randn(6_000_000, generator=g)
    m = torch.randn(768, 768, generator=g)
    fork = float(forked(torch.ones(8)).sum())  # starts the inter-op pool
    torch.exp(x)  # the OpenMP team starts
    time.sleep(0.3)  # spinning after the warm-up is not counted as work
    ew, busy_ew = busy_during(lambda: [float(torch.exp(x).sum()) for _ in range(8)])
    time.sleep(0.3)
    mm, busy_mm = busy_during(lambda: [float((m @ m).double().sum()) for _ in range(20)])
    return {"result": {"elementwise": ew, "matmul": mm, "fork": fork},
            "busy": busy_ew, "busy_matmul": busy_mm,
            "view": {"num_threads": torch.get_num_threads(),
                     "num_interop_threads": torch.get_num_interop_threads(),
                     "parallel_info": torch.__config__.parallel_info()}}


def compile_mode(a):
    import torch
    from torch._dynamo.utils import counters

    if a.threads:
        torch.set_num_threads(a.threads)  # the user's count, kept by parwidth

    @torch.compile
    def f(x, y):
        return (torch.sin(x) * torch.cos(y) + x.exp().log1p()).sum(dim=1)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(2000, 3000, generator=g)
    y = torch.randn(2000, 3000, generator=g)
    if a.compile_after:
        # A member with parallel work until told to compile: the test
        # changes the node's division while the compile runs.
        print("ready", flush=True)
        while not os.path.exists(a.compile_after):
            torch.exp(x)
        print("compiling", flush=True)
    f(x, y)  # compiles with the system's g++; the kernel is loaded
    if a.go:
        # Keep running the kernel (a member with parallel work) until told
        # to measure: the test narrows the share meanwhile.
        print("compiled", flush=True)
        while not os.path.exists(a.go):
            f(x, y)
    time.sleep(0.3)
    sums, busy = busy_during(lambda: [float(f(x, y).double().sum()) for _ in range(30)])
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
    kernels = set()
    with open("/proc/self/maps") as fh:
        for line in fh:
            path = line.split()[-1]
            if cache and path.startswith(cache) and path.endswith(".so"):
                kernels.add(path)
    needed, parallel = {}, {}
    for k in sorted(kernels):
        out = subprocess.run(["readelf", "-d", k], capture_output=True, text=True).stdout
        needed[k] = [ln.split("[")[1].rstrip("]") for ln in out.splitlines() if "(NEEDED)" in ln]
        src = k[:-len(".so")] + ".cpp"
        parallel[k] = os.path.exists(src) and "#pragma omp parallel" in open(src).read()
    return {"result": {"sums": sums}, "busy": busy, "kernels": needed, "parallel": parallel,
            "graphs": counters["stats"]["unique_graphs"],
            "share": sorted(os.sched_getaffinity(0)),
            "view": {"num_threads": torch.get_num_threads()}}


def bert_mode(a):
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=2000, hidden_size=256, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=1024)
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (4, 128), generator=torch.Generator().manual_seed(1))

    def work():
        out = []
        with torch.inference_mode():
            for _ in range(6):
                h = model(input_ids=ids).last_hidden_state.double()
                out.append([float(h.abs().sum()), float(h.square().sum())])
        return out
    work()
    time.sleep(0.3)
    sums, busy = busy_during(work)
    return {"result": {"sums": sums}, "busy": busy,
            "view": {"num_threads": torch.get_num_threads(), "blas": blas_info()}}


def tabular():
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20000, 30)).astype(np.float32)
    y = (x @ rng.standard_normal(30) + 0.3 * rng.standard_normal(20000) > 0).astype(np.float32)
    return x, y


def xgboost_mode(a):
    import xgboost
    x, y = tabular()

    def work():
        b = xgboost.train({"tree_method": "hist", "max_depth": 6, "objective": "binary:logistic",
                           "seed": 0}, xgboost.DMatrix(x, label=y), num_boost_round=40)
        return float(b.predict(xgboost.DMatrix(x)).astype("float64").sum()), b
    work()  # the first training does one-time work on one thread
    (total, booster), busy = busy_during(work)
    conf = json.loads(booster.save_config())
    return {"result": {"predictions": total}, "busy": busy,
            "view": {"nthread": conf["learner"]["generic_param"].get("nthread"),
                     "blas": blas_info()}}


def lightgbm_mode(a):
    import lightgbm
    x, y = tabular()

    def work():
        b = lightgbm.train({"objective": "binary", "num_leaves": 31, "verbose": -1, "seed": 0,
                            "deterministic": True}, lightgbm.Dataset(x, label=y),
                           num_boost_round=40)
        return float(b.predict(x).astype("float64").sum())
    work()
    total, busy = busy_during(work)
    return {"result": {"predictions": total}, "busy": busy, "view": {"blas": blas_info()}}


def hgb_mode(a):
    """scikit-learn's HistGradientBoostingClassifier (OpenMP in its Cython)."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier
    x, y = make_classification(n_samples=20000, n_features=30, random_state=0)

    def work():
        c = HistGradientBoostingClassifier(max_iter=20, early_stopping=False, random_state=0)
        return float(c.fit(x, y).predict_proba(x)[:, 1].astype("float64").sum())
    work()
    total, busy = busy_during(work)
    return {"result": {"predictions": total}, "busy": busy, "view": {"blas": blas_info()}}


def gridsearch_mode(a):
    """GridSearchCV with n_jobs=2: loky worker processes each fit a
    HistGradientBoostingClassifier (OpenMP); a scorer run in each worker
    records where the worker runs and its OpenMP runtime's count."""
    from joblib.externals.loky import get_reusable_executor
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GridSearchCV

    x, y = make_classification(n_samples=4000, n_features=20, random_state=0)
    search = GridSearchCV(HistGradientBoostingClassifier(max_iter=30, early_stopping=False,
                                                         random_state=0),
                          {"learning_rate": [0.1, 0.2], "max_leaf_nodes": [15, 31]}, cv=2,
                          n_jobs=2, scoring=Recorder(a.record))
    search.fit(x, y)
    # Workers that exit on their own write their reports; loky would otherwise
    # keep them for its next call and kill them at the interpreter's exit.
    get_reusable_executor().shutdown(wait=True)
    return {"result": {"best": search.best_params_,
                       "scores": [float(s) for s in search.cv_results_["mean_test_score"]]},
            "busy": [], "view": {"blas": blas_info()}}


class Recorder:
    """A scorer: accuracy, and one line per call about the process it ran in."""

    def __init__(self, path):
        self.path = path

    def __call__(self, est, x, y):
        with open(self.path, "a") as f:
            f.write(json.dumps({"pid": os.getpid(), "ppid": os.getppid(),
                                "cpus": sorted(os.sched_getaffinity(0)),
                                "tasks": [task(int(t)) for t in os.listdir("/proc/self/task")],
                                "blas": blas_info()}) + "\n")
        return float((est.predict(x) == y).mean())


def turns_mode(a):
    """torch's OpenMP team, numpy's OpenBLAS and scipy's own OpenBLAS take
    turns, as preprocessing and a model do in one loop."""
    import numpy as np
    import torch
    from scipy.linalg import blas as sblas
    rng = np.random.default_rng(0)
    n = np.asfortranarray(rng.standard_normal((400, 400)))
    t = torch.randn(400, 400)
    total = 0.0
    print("ready", flush=True)
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        total += float((t @ t).sum())
        total += float((n @ n).sum())
        total += float(sblas.dgemm(1.0, n, n).sum())
    return {"result": {"total": total}, "busy": []}


MODES = {"torch": torch_mode, "compile": compile_mode, "bert": bert_mode,
         "xgboost": xgboost_mode, "lightgbm": lightgbm_mode, "hgb": hgb_mode,
         "gridsearch": gridsearch_mode, "turns": turns_mode}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=sorted(MODES))
    ap.add_argument("--record", help="gridsearch: the workers' lines go here")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--go", help="compile: after compiling, run until this file exists")
    ap.add_argument("--compile-after", help="compile: print ready, compile once this file exists")
    ap.add_argument("--threads", type=int, help="compile: torch.set_num_threads(N) first")
    ap.add_argument("--after", help="import this module first (e.g. torch, whose libgomp "
                    "torch 2.x loads into the global scope)")
    a = ap.parse_args()
    if a.after:
        __import__(a.after)
    out = MODES[a.mode](a)
    out.update(pid=os.getpid(), runtimes=runtimes(),
               tasks=[t for t in (task(int(x)) for x in os.listdir("/proc/self/task")) if t])
    if a.mode == "turns":
        print(json.dumps(out), flush=True)
    else:
        json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
