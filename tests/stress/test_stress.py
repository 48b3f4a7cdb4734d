"""The stress suite (issue 14): what a site-wide preload meets in the field,
at volume. Every program must end exactly as it does bare: status, output,
no hang.

PW_STRESS=full runs the sizes of the issue (200k threads, 2000 idle
threads, ...; several minutes); the default is the short form that
scripts/test runs.

Run: PW_BUILD=build python -m pytest tests/stress (PW_BUILD=build-tsan, a
PARWIDTH_TSAN=ON build: the same under ThreadSanitizer, as scripts/test runs it)
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from test_core import BIN, LIB, ROOT, clean_env  # noqa: E402

FULL = os.environ.get("PW_STRESS") == "full"
# PW_BUILD=build-tsan: the library and the programs built with ThreadSanitizer
# (scripts/test runs the suite so too); a race report changes the exit status.
TSAN = b"libtsan" in subprocess.run(["readelf", "-d", str(LIB)], capture_output=True).stdout


def size(short, full):
    return full if FULL else short


def both(cmd, tmp_path, timeout=300, **options):
    """(bare, governed) CompletedProcess of cmd."""
    node = tmp_path / "node"
    node.mkdir(mode=0o700, exist_ok=True)
    cmd = [str(c) for c in cmd]
    bare = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=timeout)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node,
                    **{"PARWIDTH_" + k: v for k, v in options.items()})
    gov = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return bare, gov


def same(cmd, tmp_path, **options):
    bare, gov = both(cmd, tmp_path, **options)
    assert (gov.returncode, gov.stdout) == (bare.returncode, bare.stdout), gov.stderr[-2000:]
    return gov


def test_thread_churn(tmp_path):
    n = size(20000, 200000)
    same([BIN / "thread_churn", n], tmp_path, REPORT=tmp_path / "r.json")


@pytest.mark.skipif(TSAN, reason="ThreadSanitizer cannot start a thread in the child of a "
                    "multi-threaded fork, which fork_storm's children do bare too")
def test_fork_storm_from_many_threads(tmp_path):
    g = same([BIN / "fork_storm", size(4, 16), size(10, 50)], tmp_path)
    assert g.stdout.startswith("ok ")


def test_idle_threads(tmp_path):
    same([BIN / "idle_threads", size(500, 2000), size(500, 5000)], tmp_path)


def test_dlopen_dlclose_of_openmp_plugins(tmp_path):
    if TSAN:
        pytest.skip("the OpenMP plug-ins are built only without ThreadSanitizer: libgomp and "
                    "libomp are not instrumented, so TSan would not see their synchronisation")
    a, b = (BIN.parent / "lib" / f"libpw_sum_{x}.so" for x in "ab")
    if not a.exists():
        pytest.skip("no clang: libpw_sum_a.so not built")
    for _ in range(size(5, 50)):
        same([BIN / "dlclose_omp", a, b], tmp_path)


def test_exit_from_signal_handlers(tmp_path):
    for _ in range(size(10, 200)):
        bare, gov = both([BIN / "sig_exit"], tmp_path, timeout=30)
        assert gov.returncode == bare.returncode == 3


def test_raw_clone(tmp_path):
    for _ in range(size(5, 100)):
        same([BIN / "clone_exit"], tmp_path)


def test_closed_stdio(tmp_path):
    for _ in range(size(3, 50)):
        same([BIN / "closed_stdout"], tmp_path)


def test_graph_adoptions_while_neighbours_come_and_go(tmp_path):
    """Issue 39: ORT sessions made from several threads (each adopts its model's
    graph into the plan in force) and TensorFlow function graphs added, while
    governed neighbours join and leave the node registry and the program's own
    busy threads make the monitor change the OpenMP cap. Under ThreadSanitizer
    (scripts/test) a race report fails the run; either way every adoption
    succeeds and the report's timeline shows all three kinds of change."""
    ort_dir = ROOT / ".venv" / "ort" / "lib" / "python3.11" / "site-packages" / "onnxruntime" / "capi"
    ort = sorted(ort_dir.glob("libonnxruntime.so.1.*"))
    tf = ROOT / ".venv" / "tf" / "lib" / "python3.11" / "site-packages" / "tensorflow" / "libtensorflow_cc.so.2"
    # The neighbours are ordinary governed processes (never the instrumented
    # build: libtsan must be the first library of a process).
    neighbour_lib = ROOT / "build" / "lib" / "libparwidth.so"
    neighbour = ROOT / "build" / "bin" / "plan_changes"
    if not ort or not tf.exists():
        pytest.skip("the ORT and TensorFlow environments are needed (scripts/bootstrap)")
    if not neighbour_lib.exists() or not neighbour.exists():
        pytest.skip("build/ (scripts/build) is needed for the neighbours")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a node's division needs at least 2 allowed CPUs")
    model = tmp_path / "model.onnx"
    subprocess.run([str(ROOT / ".venv" / "ort" / "bin" / "python"), "-c",
                    "import sys; sys.path.insert(0, sys.argv[1]); from infer_ort import filled; "
                    "filled(sys.argv[2], sys.argv[3])", str(ROOT / "examples"),
                    str(ROOT / "tests" / "fixtures" / "models" / "squeezenet1_0.onnx"), str(model)],
                   check=True, timeout=120)
    node = tmp_path / "node"
    node.mkdir(mode=0o700)
    report = tmp_path / "r.json"
    threads, iterations = 4, size(25, 100)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node, PARWIDTH_REPORT=report,
                    PARWIDTH_MONITOR_MS=50, TF_CPP_MIN_LOG_LEVEL=2)
    if TSAN:
        # ONNX Runtime and TensorFlow are not instrumented: their own
        # synchronization (atomics, spin locks) is invisible to TSan, so what its
        # interceptors see of their memory (memcpy from inside them) is no
        # evidence of a race. parwidth's code is instrumented and still checked,
        # also where those libraries call it (its hooks).
        env["TSAN_OPTIONS"] = env.get("TSAN_OPTIONS", "") + ":ignore_noninstrumented_modules=1"
    # until-eof: the program goes on adopting until its input closes, so that
    # every run sees the same number of neighbours come and go, however fast
    # this machine makes sessions.
    p = subprocess.Popen([str(BIN / "adopt_stress"), str(ort[-1]), str(model), str(tf),
                          str(ROOT / "tests" / "fixtures" / "functions" / "keras_train_step.fdef"),
                          str(threads), str(iterations), "3", "until-eof"],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    nenv = clean_env(LD_PRELOAD=neighbour_lib, PARWIDTH_NODE_DIR=node, PARWIDTH_MONITOR_MS=50)
    arrivals = 0
    try:
        while arrivals < 3 and p.poll() is None:
            n = subprocess.Popen([str(neighbour), "neighbour"], env=nenv,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            arrivals += 1
            time.sleep(0.8)
            n.terminate()
            n.wait(timeout=30)
            # Alone for a while: the whole budget, where its busy threads make the
            # monitor lower the OpenMP cap (on a share of one core it is 1 already).
            time.sleep(0.8)
        out, err = p.communicate(input="", timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err[-4000:]
    made = out.split()
    assert len(made) == 3 and made[0] == "ok" and made[1] == made[2], (out, err[-2000:])
    assert int(made[1]) >= threads * iterations, (out, err[-2000:])
    changes = json.loads(report.read_text())["in_force"]["changes"]
    assert changes["graph"] >= 1 and changes["monitor"] >= 1, changes
    assert changes["node"] >= 2, (arrivals, changes)
