"""Integration tests: processes of different frameworks sharing one node
(issue 31). Real PyTorch, ONNX Runtime and TensorFlow processes
(examples/infer_mixed.py, each in its own environment) run under the preload
with one node registry, started together or one after another in each order.

While they run, the test reads /proc at the monitor's period: a process's
runnable pool threads (state R) against the CPUs of its share (its main
thread's affinity: the process lives inside its share). Pool threads are the
threads that run the model's work: for PyTorch and ONNX Runtime every thread
but parwidth's monitor, the Python thread included (it is OpenMP's master
and ORT's caller, which takes a share of each parallel loop); for
TensorFlow every thread but the monitor and the Python thread, which runs no
kernel of a tf.function: it waits for the inter-op pool, then copies the
output and makes the next call while the pool's thread finishes the last
(bare TensorFlow at one thread pinned to one core: the Python thread used 10%
of the core and was runnable beside tf_Compute in 31 of 239 samples, in runs
of up to 4 samples under the node's load).

From the moment every process steps in its loop (the common window: all of
them have arrived, so every division they cause has happened) no process may
have more runnable pool threads than its share's CPUs for longer than two
monitor periods: in more than three samples in a row, three
samples spanning two periods (a thread woken just before another sleeps is
counted twice in a sample; on a loaded machine that can last a sample or two).
Before that window a process may be alone, and a lone PyTorch process runs
its OpenMP team and OpenBLAS's pool at the budget's size each (3 runnable
threads on 2 CPUs at times): oversubscription inside one process, which the
monitor watches, not the node's division.
Every process also computes what it computes bare: ONNX Runtime's and
TensorFlow's outputs do not depend on their thread counts, and must be the
bare run's bit for bit; PyTorch's reductions do, so its output must be a bare
run's at one of the team sizes it may have had.
"""
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from test_core import FULL, LIB, ROOT, clean_env

WORKER = ROOT / "examples" / "infer_mixed.py"
PY = {"torch": ROOT / ".venv" / "torch" / "bin" / "python",
      "ort": ROOT / ".venv" / "ort" / "bin" / "python",
      "tf": ROOT / ".venv" / "tf" / "bin" / "python"}
# Whether the Python thread is one of the framework's pool threads (see above).
CALLER_IN_POOL = {"torch": True, "ort": True, "tf": False}
PERIOD_MS = 100
LOAD_S = 25  # the slowest start (TensorFlow's import and model) on a loaded 2-core machine
WINDOW_S = 6

pytestmark = pytest.mark.skipif(
    len(FULL) < 2, reason="a node's division needs at least 2 allowed CPUs")


def need(*frameworks):
    missing = [f for f in frameworks if not PY[f].exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} environment missing (scripts/bootstrap)")


def worker(fw, out, begin, end, preload=None, threads=0, omp=0):
    env = clean_env()
    if omp:
        env["OMP_NUM_THREADS"] = str(omp)
    if preload:
        env.update(preload)
    cmd = [str(PY[fw]), str(WORKER), "--framework", fw, "--begin", str(begin), "--end", str(end),
           "--json", str(out)]
    if threads:
        cmd += ["--threads", str(threads)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


class Bare:
    """Digests of bare runs, made once each: ORT and TF at their defaults
    (their outputs do not depend on their thread counts), torch at a given
    team size (its reductions do), set the two ways a user sets it: by
    torch.set_num_threads in the program, or by OMP_NUM_THREADS before it
    starts, which also sizes OpenBLAS's pool at load (torch's output differs
    between the two at one thread)."""

    def __init__(self, d):
        self.d, self.seen = d, {}

    def digest(self, fw, threads=0, omp=0):
        if (fw, threads, omp) not in self.seen:
            out = self.d / f"{fw}{threads}-{omp}.json"
            t = time.time()
            p = worker(fw, out, t, t, threads=threads, omp=omp)
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-2000:]
            self.seen[(fw, threads, omp)] = json.loads(out.read_text())["digest_after"]
        return self.seen[(fw, threads, omp)]

    def digests(self, fw, report):
        """What a governed process of `fw` may compute: for torch, a bare run's
        output at any team size it had (the plan's threads alone, which
        without a graph are the budget's cores, and every OpenMP cap in force
        at some time, from its report's timeline), set either way: a process that joins
        the node before torch first sizes its pools starts them (OpenBLAS's
        among them) at its share's size, as OMP_NUM_THREADS would."""
        if fw != "torch":
            return {self.digest(fw)}
        sizes = {len(FULL), report["plan"]["threads"]}
        sizes |= {e["omp_cap"] for e in report["plan_timeline"] if e["omp_cap"] > 0}
        return ({self.digest(fw, n) for n in sorted(sizes)} |
                {self.digest(fw, 0, n) for n in sorted(sizes)})


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    return Bare(tmp_path_factory.mktemp("bare"))


class ProcWatch:
    """Samples each process's runnable pool threads and share every period."""

    def __init__(self, period_s):
        self.period_s = period_s
        self.pids = {}
        self.samples = {}  # name -> [(runnable, share cpus, time)]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def add(self, name, pid, caller_in_pool):
        self.pids[name] = (pid, caller_in_pool)
        self.samples[name] = []

    @staticmethod
    def read(pid, caller_in_pool):
        """(runnable pool threads, CPUs of the share); the process's first
        thread counts only where `caller_in_pool`."""
        runnable = 0
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return None
        for tid in tids:
            try:
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            state = stat[stat.rindex(")") + 2]
            if state == "R" and comm != "parwidth-mon" and (caller_in_pool or tid != str(pid)):
                runnable += 1
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return None
        line = next(x for x in status.splitlines() if x.startswith("Cpus_allowed_list:"))
        share = 0
        for part in line.split(":", 1)[1].strip().split(","):
            lo, _, hi = part.partition("-")
            share += int(hi or lo) - int(lo) + 1
        return runnable, share

    def run(self):
        while not self.stop.is_set():
            for name, (pid, caller_in_pool) in list(self.pids.items()):
                s = self.read(pid, caller_in_pool)
                if s is not None:
                    self.samples[name].append(s + (time.time(),))
            time.sleep(self.period_s)

    def window(self, name, begin, end):
        return [(r, s) for r, s, t in self.samples[name] if begin <= t <= end]

    def longest_excess(self, name, begin=0.0, end=float("inf")):
        """The most samples in a row, between begin and end, with more runnable
        threads than the share's CPUs."""
        longest = run = 0
        for runnable, share in self.window(name, begin, end):
            run = run + 1 if runnable > share else 0
            longest = max(longest, run)
        return longest


def run_node(tmp_path, frameworks, stagger_s, expect=0):
    """Starts `frameworks` in order, `stagger_s` apart, under the preload with
    one node registry (and PARWIDTH_NODE_EXPECT=`expect` where given); returns
    their outputs, reports and the watch."""
    need(*frameworks)
    t0 = time.time()
    begin = t0 + stagger_s * (len(frameworks) - 1) + LOAD_S
    end = begin + WINDOW_S
    watch = ProcWatch(PERIOD_MS / 1000)
    watch.thread.start()
    procs = []
    try:
        for i, fw in enumerate(frameworks):
            delay = t0 + i * stagger_s - time.time()
            if delay > 0:
                time.sleep(delay)
            preload = {"LD_PRELOAD": str(LIB), "PARWIDTH_NODE_DIR": str(tmp_path / "node"),
                       "PARWIDTH_MONITOR_MS": str(PERIOD_MS),
                       "PARWIDTH_REPORT": str(tmp_path / f"r{i}.json")}
            if expect:
                preload["PARWIDTH_NODE_EXPECT"] = str(expect)
            p = worker(fw, tmp_path / f"w{i}.json", begin, end, preload=preload)
            watch.add(f"{i}:{fw}", p.pid, CALLER_IN_POOL[fw])
            procs.append(p)
        for p in procs:
            _, err = p.communicate(timeout=LOAD_S + WINDOW_S + 300)
            assert p.returncode == 0, err[-3000:]
    finally:
        watch.stop.set()
        watch.thread.join()
        for p in procs:
            if p.poll() is None:
                p.kill()
    outs = [json.loads((tmp_path / f"w{i}.json").read_text()) for i in range(len(frameworks))]
    reports = [json.loads((tmp_path / f"r{i}.json").read_text()) for i in range(len(frameworks))]
    watch.begin, watch.end = begin, end
    return outs, reports, watch


# TensorFlow sizes its intra- and inter-op pools once, when its session or
# eager context is made, and offers no way to change them or to rebuild a
# context that holds a model's variables. Started first and alone, it gets
# the whole budget unless the node says how many processes it will hold
# (PARWIDTH_NODE_EXPECT, the third element: 0 = not said): then its pools
# are made for its share among that many. Without it they stay larger than
# the share when a neighbour arrives (re-pinned into it, not spinning): what
# the report says of that is tested below
# (test_tensorflow_made_alone_says_its_pools_keep_their_size).
ORDERS = [
    (("ort", "torch"), 4, 0),
    (("torch", "ort"), 4, 0),
    (("ort", "tf"), 4, 0),
    (("torch", "tf", "ort"), 0, 0),
    (("ort", "tf", "torch"), 4, 0),
    (("tf", "ort"), 4, 2),
    (("tf", "torch", "ort"), 4, 3),
]


def order_id(p):
    frameworks, stagger, expect = p.values if hasattr(p, "values") else p
    return ("+".join(frameworks) + (" together" if stagger == 0 else " staggered") +
            (f" expect {expect}" if expect else ""))


@pytest.mark.parametrize("frameworks,stagger,expect", ORDERS,
                         ids=[order_id(p) for p in ORDERS])
def test_pools_stay_within_the_share_in_every_order(tmp_path, bare, frameworks, stagger, expect):
    outs, reports, watch = run_node(tmp_path, list(frameworks), stagger, expect)
    for i, fw in enumerate(frameworks):
        name = f"{i}:{fw}"
        during = watch.window(name, watch.begin, watch.end)
        assert len(during) > 10, f"{name}: too few samples in the window"
        excess = watch.longest_excess(name, watch.begin, watch.end)
        notes = [(f["setting"], f["value"], f["why"]) for f in reports[i]["frameworks"]
                 if f["name"] in ("onnxruntime", "tensorflow", "node", "membership")]
        # Three samples in a row span two monitor periods: more is a fault.
        assert excess <= 3, (
            f"{name}: more runnable pool threads than its share's CPUs in {excess} samples in a "
            f"row; samples (runnable, share): {during}; notes: {notes}")
        # The same results as bare.
        o = outs[i]
        want = bare.digests(fw, reports[i])
        assert o["digest_before"] in want and o["digest_after"] in want, (fw, o, want)


def test_an_ort_session_made_alone_is_rebuilt_when_a_neighbour_arrives(tmp_path, bare):
    """ORT sizes its pools once; made alone, the Python session is made again
    with the share's threads (and no spinning) when the node is divided."""
    outs, reports, _ = run_node(tmp_path, ["ort", "torch"], 6)
    notes = [f for f in reports[0]["frameworks"]
             if f["setting"] == "session rebuilt for the plan in force (Python)"]
    assert notes and notes[0]["applied"], reports[0]["frameworks"]
    made, now = notes[0]["value"].split(" -> ")

    def intra(shape):
        return int(shape.split("intra ")[1].split(",")[0])

    assert intra(now) < intra(made), notes[0]
    assert "spin 0" in now, notes[0]
    assert outs[0]["digest_after"] == bare.digest("ort")


def test_tensorflow_made_alone_says_its_pools_keep_their_size(tmp_path, bare):
    """What a re-division cannot undo is in the report: TensorFlow's pools,
    made for the whole budget, keep their size on the share; the neighbour
    that arrived is within its own share, and both compute what they do bare."""
    outs, reports, watch = run_node(tmp_path, ["tf", "ort"], 4)
    kept = [f for f in reports[0]["frameworks"]
            if f["name"] == "tensorflow" and f["setting"].startswith("thread pool")
            and not f["applied"] and "cannot resize" in f["why"]]
    assert kept, reports[0]["frameworks"]
    assert watch.longest_excess("1:ort", watch.begin, watch.end) <= 3, watch.samples["1:ort"]
    assert outs[0]["digest_after"] == bare.digest("tf")
    assert outs[1]["digest_after"] == bare.digest("ort")
