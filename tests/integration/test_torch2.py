"""Integration tests: the frameworks users install today, governed.

PyPI's torch 2.x (MKL with GNU threading and its own libgomp inside the
wheel), torch.compile's C++ kernels (inductor, built with the system's g++),
transformers, XGBoost, LightGBM and scikit-learn's grid search with loky
worker processes: tests/programs/frameworks2.py runs each bare and under the
preload, on random weights and synthetic data (no download), and prints what
the kernel saw: the threads that did the work, where they were allowed to run
and where they last ran, the OpenMP runtimes and BLAS libraries mapped, and
the numbers to compare with the bare run. Debian's torch 1.13 (test_torch.py,
.venv/torch) is the older version.

A test marked xfail(strict=True) is a known limitation (its reason says
which); it turns into a failure ("XPASS(strict)") when the limitation is
gone, and then loses the mark.

Run with the torch 2 environment (scripts/bootstrap makes it):
    PW_BUILD=build .venv/torch2/bin/python -m pytest tests/integration/test_torch2.py
Elsewhere the file skips itself.
"""
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_core import FULL, LIB, ROOT, clean_env, cpu_list, load
from test_multiproc import spin  # noqa: F401 (a fixture: the spinning neighbour, compiled once)

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("PyPI's torch 2.x is in .venv/torch2 (this is torch "
                f"{torch.__version__}; test_torch.py covers it)", allow_module_level=True)

PROBE = ROOT / "tests" / "programs" / "frameworks2.py"
ONE = max(FULL)  # the CPU a narrowed share keeps


@pytest.fixture(scope="module", autouse=True)
def two_cpus():
    if len(FULL) < 2:
        pytest.skip("these tests need at least 2 allowed CPUs")


@pytest.fixture(scope="module")
def inductor_cache(tmp_path_factory):
    """One inductor cache for the module: a governed run with the bare run's
    thread count loads the kernel the bare run compiled (each compile takes
    tens of seconds of g++)."""
    return tmp_path_factory.mktemp("inductor")


def probe(tmp_path, mode, *args, preload=True, name="r", env=None, **options):
    """Runs one mode of the probe; returns (its output, {pid: report}, its own report)."""
    extra = {"PARWIDTH_" + k: v for k, v in options.items()}
    extra.update(env or {})
    if preload:
        extra.update(LD_PRELOAD=LIB, PARWIDTH_REPORT=tmp_path / f"{name}.%p.json",
                     PARWIDTH_NODE_DIR=tmp_path / f"{name}-node")
    p = subprocess.run([sys.executable, str(PROBE), mode, *map(str, args)],
                       env=clean_env(**extra), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)
    reports = {r["pid"]: r for r in (load(f) for f in tmp_path.glob(f"{name}.*.json"))}
    return out, reports, reports.get(out["pid"])


def note(report, name, setting_part):
    found = [f for f in report["frameworks"]
             if f["name"] == name and setting_part in f["setting"]]
    assert found, (name, setting_part, report["frameworks"])
    return found[-1]


def plan_cpus(report):
    return {c for s in report["plan"]["core_sets"] for c in s}


def openmp_runtimes(out):
    return [r for r in out["runtimes"] if "gomp" in r or "libomp" in r or "iomp" in r]


def same_numbers(a, b, rel):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same_numbers(a[k], b[k], rel)
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same_numbers(x, y, rel)
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=rel), (a, b)
    else:
        assert a == b


def check_busy_inside(out, cpus, at_most):
    """The threads that did the work: at least one, at most `at_most`, each
    allowed only on `cpus` (the main thread: inside them) and last run there."""
    busy = out["busy"]
    assert 1 <= len(busy) <= at_most, busy
    for t in busy:
        assert set(t["cpus"]) <= set(cpus), (t, cpus)
        assert t["last_cpu"] in cpus, (t, cpus)


_bare = {}


def bare(tmp_path_factory, mode, *args, env=None):
    """The bare run of a mode, once per module."""
    key = mode  # args name only where a run writes its side files
    if key not in _bare:
        d = tmp_path_factory.mktemp(f"bare-{mode}")
        _bare[key] = probe(d, mode, *args, preload=False, env=env)[0]
    return _bare[key]


# ------------------------------------------------------------ torch 2.x itself


@pytest.mark.parametrize("pools", [None, 2])
def test_intra_inter_and_openmp_team_as_planned(tmp_path, tmp_path_factory, pools):
    opts = {"POOLS": pools} if pools else {}
    # The monitor off: on a shared machine it may lower the team cap on its own.
    out, _, report = probe(tmp_path, "torch", MONITOR="off", **opts)
    plan = report["plan"]
    threads = plan["threads"]
    # torch's own view: the plan's intra-op threads and inter-op pools.
    assert out["view"]["num_threads"] == threads
    assert out["view"]["num_interop_threads"] == plan["pools"]
    intra = note(report, "torch", "intra-op threads (at::set_num_threads)")
    assert intra["applied"] is True and int(intra["value"]) == threads
    inter = note(report, "torch", "inter-op pool size")
    assert inter["applied"] is True and int(inter["value"]) == plan["pools"]
    # One OpenMP runtime in the process, the wheel's own libgomp, and MKL
    # (GNU threading, linked into libtorch_cpu) uses its team: both report
    # the plan's threads.
    runtimes = openmp_runtimes(out)
    assert len(runtimes) == 1 and "/torch/lib/libgomp" in runtimes[0], out["runtimes"]
    assert report["openmp"]["team_cap"] == threads
    info = out["view"]["parallel_info"]
    assert f"omp_get_max_threads() : {threads}" in info, info
    assert f"mkl_get_max_threads() : {threads}" in info, info
    # The team the kernels used (an elementwise op and a GEMM): the plan's
    # threads at most, inside the plan's cores; libgomp's workers are
    # the plan's threads less the main thread.
    gomp = [t for t in report["threads"]
            if t["creator"].startswith("libgomp") and not t.get("ended")]
    assert len(gomp) == threads - 1, report["threads"]
    check_busy_inside(out, plan_cpus(report), threads)
    check_busy_inside(dict(out, busy=out["busy_matmul"]), plan_cpus(report), threads)
    # The outputs: a different team size sums in another order.
    same_numbers(out["result"], bare(tmp_path_factory, "torch")["result"], 1e-5)


def test_narrowed_share_holds_every_thread(tmp_path, tmp_path_factory):
    out, _, report = probe(tmp_path, "torch", CPUS=ONE)
    assert report["budget"]["cpus"] == [ONE]
    assert out["view"]["num_threads"] == 1
    # The whole process lives in the share: every thread, the main thread,
    # the monitor and the inter-op pool included.
    for t in out["tasks"]:
        assert t["cpus"] == [ONE], t
    check_busy_inside(out, [ONE], 1)
    same_numbers(out["result"], bare(tmp_path_factory, "torch")["result"], 1e-5)


# ------------------------------------------------------------ torch.compile


def test_compiled_kernels_use_the_governed_team(tmp_path, tmp_path_factory, inductor_cache):
    env = {"TORCHINDUCTOR_CACHE_DIR": inductor_cache}
    out, _, report = probe(tmp_path, "compile", MONITOR="off", env=env)
    threads = report["plan"]["threads"]
    assert out["view"]["num_threads"] == threads
    # The kernel needs libgomp.so.1 by its soname: the loader hands it the
    # copy already loaded, the wheel's own, which is the only OpenMP
    # runtime in the process: the team parwidth caps.
    assert out["kernels"], "no compiled kernel was loaded from the cache"
    assert all("libgomp.so.1" in needed for needed in out["kernels"].values()), out["kernels"]
    runtimes = openmp_runtimes(out)
    assert len(runtimes) == 1 and "/torch/lib/libgomp" in runtimes[0], out["runtimes"]
    check_busy_inside(out, plan_cpus(report), threads)
    same_numbers(out["result"], bare(tmp_path_factory, "compile", env=env)["result"], 1e-6)


def test_compiled_kernels_follow_a_share_narrowed_after_compiling(tmp_path, tmp_path_factory,
                                                                  inductor_cache, spin):
    # Compiled while alone, with the user's torch.set_num_threads(all CPUs)
    # (kept: torch's count does not change, so dynamo does not recompile
    # and the kernel with its OpenMP region stays), then a second governed
    # process joins the node: the kernel's team must run inside the smaller
    # share.
    from test_multiproc import finish, start_spin

    node = tmp_path / "node"
    go = tmp_path / "go"
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node, PARWIDTH_MONITOR_MS=50,
                    PARWIDTH_REPORT=tmp_path / "r.json", TORCHINDUCTOR_CACHE_DIR=inductor_cache)
    p = subprocess.Popen([sys.executable, str(PROBE), "compile", "--go", str(go), "--threads",
                          str(len(FULL))], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    other = None
    try:
        assert p.stdout.readline().strip() == "compiled", p.stderr.read()[-3000:]
        other = start_spin(spin, node, tmp_path / "spin.json", n=len(FULL))
        deadline = time.monotonic() + 60
        while len(os.sched_getaffinity(p.pid)) == len(FULL):
            assert time.monotonic() < deadline, "the probe's share never shrank"
            time.sleep(0.05)
        go.touch()
        rest, err = p.communicate(timeout=600)
    finally:
        if other is not None:
            finish(other)
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err[-3000:]
    out = json.loads(rest)
    assert out["graphs"] == 1 and all(out["parallel"].values()), (out["graphs"], out["parallel"])
    share = out["share"]
    assert len(share) < len(FULL), out["share"]
    check_busy_inside(out, share, len(FULL))
    same_numbers(out["result"], bare(tmp_path_factory, "compile",
                                     env={"TORCHINDUCTOR_CACHE_DIR": inductor_cache})["result"],
                 1e-6)


COUNTS = r"""
import ctypes, json, os, sys, time, torch
mkl = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
a = torch.randn(256, 256)
print("ready", flush=True)
last = None
while not os.path.exists(sys.argv[1]):
    a = torch.tanh(a @ a) / 16
    last = [torch.get_num_threads(), mkl.mkl_get_max_threads(), len(os.sched_getaffinity(0))]
print(json.dumps(last), flush=True)
"""


@pytest.mark.skipif(len(FULL) < 2, reason="needs at least 2 CPUs")
@pytest.mark.parametrize("first", [True, False], ids=["shrunk-later", "joins-second"])
def test_torch_and_mkl_counts_follow_the_nodes_division(tmp_path, spin, first):
    # torch 2.x's at::set_num_threads sets the OpenMP count and MKL's count
    # for the thread (MKL_Set_Num_Threads_Local); MKL's GEMMs then run with
    # MKL's. Whether the process was alone when torch started and shrank
    # later, or joined second while torch was starting: in its smaller share
    # (one core of two; half the cores on a larger machine), torch's count
    # and MKL's agree and fit it (read at the same moment as the share).
    from test_multiproc import finish, start_spin

    node = tmp_path / "node"
    stop = tmp_path / "stop"
    other = None if first else start_spin(spin, node, tmp_path / "spin.json", n=len(FULL))
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node, PARWIDTH_MONITOR_MS=50)
    p = subprocess.Popen([sys.executable, "-c", COUNTS, str(stop)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-3000:]
        if first:
            other = start_spin(spin, node, tmp_path / "spin.json", n=len(FULL))
        deadline = time.monotonic() + 60
        while len(os.sched_getaffinity(p.pid)) == len(FULL):
            assert time.monotonic() < deadline, "the share never shrank"
            time.sleep(0.05)
        time.sleep(1.0)  # a few regions in the new share
        stop.touch()
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        if other is not None:
            finish(other)
    assert p.returncode == 0, err[-3000:]
    torch_count, mkl_count, cpus = json.loads(out.splitlines()[-1])
    assert cpus < len(FULL), out
    assert torch_count == mkl_count <= cpus, out


def test_compile_survives_a_change_of_the_nodes_division(tmp_path, spin):
    # The node's division changes while torch.compile runs (another governed
    # process leaves during the compile): the program must not break. A
    # cache of its own: a cached kernel would make the compile too short.
    from test_multiproc import finish, start_spin

    node = tmp_path / "node"
    start = tmp_path / "start"
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node, PARWIDTH_MONITOR_MS=50,
                    PARWIDTH_REPORT=tmp_path / "r.json",
                    TORCHINDUCTOR_CACHE_DIR=tmp_path / "inductor")
    p = subprocess.Popen([sys.executable, str(PROBE), "compile", "--compile-after", str(start)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    other = None
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-3000:]
        other = start_spin(spin, node, tmp_path / "spin.json", n=len(FULL))
        deadline = time.monotonic() + 60
        while len(os.sched_getaffinity(p.pid)) == len(FULL):
            assert time.monotonic() < deadline, "the probe's share never shrank"
            time.sleep(0.05)
        start.touch()
        assert p.stdout.readline().strip() == "compiling", p.stderr.read()[-3000:]
        # Dynamo has read torch's thread count; inductor and g++ take seconds.
        time.sleep(0.5)
        finish(other)
        other = None
        _, err = p.communicate(timeout=600)
    finally:
        if other is not None:
            finish(other)
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err[-3000:]
    # What parwidth did instead, in the report: torch's count kept.
    r = load(tmp_path / "r.json")
    kept = note(r, "torch", "thread count across plan changes")
    assert kept["applied"] is False and "torch.compile" in kept["why"], kept


# ------------------------------------------------------------ transformers


@pytest.mark.parametrize("intra", [None, 1])
def test_transformers_bert_pools_found_capped_and_results_equal(tmp_path, tmp_path_factory,
                                                                intra):
    # PARWIDTH_INTRA=1 makes the caps visible on a machine whose every pool
    # already has one thread per core.
    opts = {"INTRA": intra} if intra else {}
    out, _, report = probe(tmp_path, "bert", MONITOR="off", **opts)
    # transformers imports torch._dynamo and torch._inductor without
    # compiling: torch's count still follows the plan as it changes.
    assert not [f for f in report["frameworks"]
                if f["setting"] == "thread count across plan changes"], report["frameworks"]
    threads = report["plan"]["threads"]
    assert out["view"]["num_threads"] == threads
    # Every BLAS pool in the process (numpy's OpenBLAS, scipy's own,
    # imported by transformers) is in the report, at the plan's threads at
    # most, and threadpoolctl reads the same count from the library.
    openblas = {os.path.basename(r) for r in out["runtimes"] if "openblas" in r}
    assert len(openblas) >= 1, out["runtimes"]
    pools = {p["object"]: p for p in report["pools"]}
    assert openblas <= set(pools), (openblas, report["pools"])
    seen = {b["file"]: b["threads"] for b in out["view"]["blas"]}
    for name in openblas:
        assert pools[name]["after"] <= threads, pools[name]
        assert seen[name] == pools[name]["after"], (seen, pools[name])
        if intra:
            assert pools[name]["applied"] is True and pools[name]["before"] > threads
    check_busy_inside(out, plan_cpus(report), threads)
    same_numbers(out["result"], bare(tmp_path_factory, "bert")["result"], 1e-5)


# ------------------------------------------------------------ XGBoost, LightGBM


@pytest.mark.parametrize("narrow", [False, True], ids=["share", "narrowed"])
@pytest.mark.parametrize("lib", ["xgboost", "lightgbm"])
def test_gradient_boosting_team_inside_the_share(tmp_path, tmp_path_factory, lib, narrow):
    opts = {"CPUS": ONE} if narrow else {}
    out, _, report = probe(tmp_path, lib, MONITOR="off", **opts)
    threads = report["plan"]["threads"]
    cpus = plan_cpus(report)
    # Each brings an OpenMP runtime of its own: XGBoost a renamed libgomp
    # (scikit-learn's copy, when scikit-learn loaded it first), LightGBM
    # the system's libgomp.so.1. Their teams were made by the pthread_create
    # hook inside the plan: libgomp workers listed, pinned in its cores.
    assert openmp_runtimes(out), out["runtimes"]
    gomp = [t for t in report["threads"]
            if t["creator"].startswith("libgomp") and not t.get("ended")]
    assert len(gomp) == threads - 1, report["threads"]
    assert all(t["pinned"] and t["cpu"] in cpus for t in gomp), gomp
    check_busy_inside(out, cpus, threads)
    if narrow:
        assert cpus == {ONE}
        for t in out["tasks"]:
            assert t["cpus"] == [ONE], t
    # Histogram sums that do not depend on the team size: the same bits.
    assert out["result"] == bare(tmp_path_factory, lib)["result"]


@pytest.mark.parametrize("lib", ["xgboost", "hgb", "lightgbm"])
def test_openmp_libraries_imported_after_torch_give_the_bare_results(tmp_path, lib):
    # The order of a notebook that imports torch first. LightGBM needs
    # libgomp.so.1 by torch's soname: one runtime, the control case.
    b, _, _ = probe(tmp_path, lib, "--after", "torch", preload=False)
    out, _, report = probe(tmp_path, lib, "--after", "torch", MONITOR="off")
    assert out["result"] == b["result"]


# ------------------------------------------------------------ scikit-learn, loky


def workers(tmp_path, out):
    lines = [json.loads(x) for x in (tmp_path / "record").read_text().splitlines()]
    by_pid = {}
    for x in lines:
        assert x["ppid"] == out["pid"], x
        by_pid[x["pid"]] = x
    assert len(by_pid) == 2, sorted(by_pid)  # n_jobs=2
    return by_pid


def test_gridsearch_workers_plan_inside_the_parents_share(tmp_path, tmp_path_factory):
    out, reports, report = probe(tmp_path, "gridsearch", "--record", tmp_path / "record",
                                 CPUS=ONE)
    assert report["budget"]["cpus"] == [ONE]
    for pid, w in workers(tmp_path, out).items():
        # Where the worker ran: inside the parent's share, every thread.
        assert w["cpus"] == [ONE], w
        assert all(t["cpus"] == [ONE] for t in w["tasks"] if t), w["tasks"]
        # How it planned: inside that share, not as a new member of the node.
        r = reports[pid]
        assert r["governed"] is True and r["budget"]["cpus"] == [ONE]
        assert any("inside its parent's share" in f["why"] for f in r["frameworks"]), \
            r["frameworks"]
    assert out["result"] == bare(tmp_path_factory, "gridsearch", "--record",
                                 tmp_path / "bare-record")["result"]


def test_gridsearch_workers_keep_joblibs_thread_limit(tmp_path, tmp_path_factory):
    # joblib gives each loky worker OMP_NUM_THREADS = CPUs / n_jobs: the
    # workers' OpenMP teams together fit the machine, and parwidth keeps it.
    out, reports, _ = probe(tmp_path, "gridsearch", "--record", tmp_path / "record")
    total = 0
    for pid, w in workers(tmp_path, out).items():
        omp = [b["threads"] for b in w["blas"] if b["api"] == "openmp"]
        assert omp, w["blas"]
        total += max(omp)
        kept = note(reports[pid], "openmp", "OMP_NUM_THREADS")
        assert kept["applied"] is False and "kept" in kept["why"]
    assert total <= len(FULL)
    assert out["result"] == bare(tmp_path_factory, "gridsearch", "--record",
                                 tmp_path / "bare-record")["result"]


def test_gridsearch_helpers_take_no_share_from_the_parent(tmp_path):
    # loky's resource tracker imports numpy (an OpenBLAS pool is made) and computes on its
    # main thread for a while: it must not join the node and take a core from its parent.
    out, _, report = probe(tmp_path, "gridsearch", "--record", tmp_path / "record")
    narrowed = [f for f in report["frameworks"] if f["name"] == "node"
                and f["setting"] == "cores" and cpu_list(f["value"]) != FULL]
    assert not narrowed, narrowed


# ------------------------------------------------------------ libraries taking turns


def runnable(pid):
    """How many of pid's threads (the monitor's aside) are runnable now."""
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] == "R" and comm != "parwidth-mon":
            n += 1
    return n


def test_pool_threads_taking_turns_stay_within_the_share(tmp_path):
    """torch, numpy's OpenBLAS and scipy's OpenBLAS take turns in one loop.
    Sampled from /proc: the runnable threads (a spinning thread is runnable)
    exceed the share's CPUs for at most two monitor periods in a row."""
    report = tmp_path / "r.json"
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=tmp_path / "node", PARWIDTH_REPORT=report)
    p = subprocess.Popen([sys.executable, str(PROBE), "turns", "--seconds", "6"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-3000:]
        while p.poll() is None:
            try:
                samples.append((time.monotonic(), runnable(p.pid)))
            except FileNotFoundError:
                break
            time.sleep(0.005)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0
    r = load(report)
    share = len(r["budget"]["cpus"])
    period = r["monitor"]["period_ms"] / 1000.0
    assert len(samples) > 50, len(samples)
    longest, start = 0.0, None
    for t, n in samples:
        if n > share:
            start = t if start is None else start
            longest = max(longest, t - start)
        else:
            start = None
    assert longest <= 2 * period, (longest, period, share)
