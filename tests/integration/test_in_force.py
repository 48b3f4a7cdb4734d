"""Integration tests (issue 39): the report's plan in force is what the runtimes
themselves say is in force at exit, after the plan changed under them: a node
re-division (a governed neighbour joins, then leaves) and a monitor cap change
(the program oversubscribes itself). Real libgomp and LLVM libomp programs
(tests/programs/plan_changes.c), real PyTorch, ONNX Runtime and TensorFlow
(tests/programs/plan_changes.py, each in its own environment).

Each program prints what its runtime reports at its end (omp_get_max_threads,
torch.get_num_threads, an ORT session's options, TensorFlow's inter-op
threads); the report's `in_force` must list the same values, and they must
agree with the plan in force the report names (the OpenMP cap for OpenMP and
torch). The report's `plan_timeline` must show the three changes in order."""
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from test_core import BIN, FULL, LIB, ROOT, clean_env

PY = {"torch": ROOT / ".venv" / "torch" / "bin" / "python",
      "ort": ROOT / ".venv" / "ort" / "bin" / "python",
      "tf": ROOT / ".venv" / "tf" / "bin" / "python"}
PROGRAM = ROOT / "tests" / "programs" / "plan_changes.py"

pytestmark = pytest.mark.skipif(
    len(FULL) < 2, reason="a node's division needs at least 2 allowed CPUs")


def governed_env(node, report):
    return clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node, PARWIDTH_REPORT=report,
                     PARWIDTH_MONITOR_MS=100)


def run_through_changes(tmp_path, cmd):
    """Runs cmd under the preload beside a neighbour that joins and, once cmd
    saw its share narrow, leaves; returns (cmd's stdout lines, its report)."""
    node = tmp_path / "node"
    node.mkdir(mode=0o700)
    report = tmp_path / "report.json"
    env = governed_env(node, report)
    p = subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines, neighbour = [], None
    try:
        for line in p.stdout:
            lines.append(line.strip())
            if line.startswith("start"):
                neighbour = subprocess.Popen(
                    [str(BIN / "plan_changes"), "neighbour"],
                    env=governed_env(node, tmp_path / "neighbour.json"),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elif line.startswith("narrowed") and neighbour:
                neighbour.terminate()
                neighbour.wait(timeout=30)
        err = p.stderr.read()
        p.wait(timeout=300)
    finally:
        for q in (p, neighbour):
            if q and q.poll() is None:
                q.kill()
                q.wait()
    assert p.returncode == 0, (lines, err[-3000:])
    return lines, json.loads(report.read_text())


def changes_in_order(report):
    """The timeline went: activation, narrowed by the node, widened by the node,
    then a monitor cap change (other entries may come between)."""
    causes = [e["cause"] for e in report["plan_timeline"]]
    assert causes[0] == "activation", causes
    gens = [e["generation"] for e in report["plan_timeline"]]
    assert gens == list(range(1, len(gens) + 1)), gens
    node = [i for i, c in enumerate(causes) if c.startswith("node:")]
    monitor = [i for i, c in enumerate(causes) if c.startswith("monitor:")]
    assert len(node) >= 2, causes
    assert monitor and monitor[-1] > node[1], causes
    assert report["in_force"]["generation"] == gens[-1]


def own_values(report, runtime):
    return [r for r in report["in_force"]["runtimes"] if r["runtime"] == runtime]


@pytest.mark.parametrize("program", ["plan_changes", "plan_changes_clang"])
def test_openmp_max_threads_in_the_report_are_the_runtimes(tmp_path, program):
    exe = BIN / program
    if not exe.exists():
        pytest.skip(f"{program} not built (no clang for LLVM libomp)")
    lines, report = run_through_changes(tmp_path, [exe])
    assert lines[-1].startswith("end "), lines
    own = int(lines[-1].split()[1])
    changes_in_order(report)
    cap = report["in_force"]["omp_cap"]
    runtime = "libomp" if program.endswith("clang") else "libgomp"
    reported = [r for r in own_values(report, "openmp") if r["object"].startswith(runtime)]
    assert reported and all(r["value"] == own for r in reported), report["in_force"]
    # The runtime's count is the cap in force, which the monitor lowered last.
    assert own == cap and cap < report["in_force"]["threads"], report["in_force"]


def need(fw):
    if not PY[fw].exists():
        pytest.skip(f".venv/{fw} missing (scripts/bootstrap)")


def python_run(tmp_path, fw):
    need(fw)
    lines, report = run_through_changes(tmp_path, [PY[fw], PROGRAM, fw])
    assert lines[-2] == "capped", lines
    changes_in_order(report)
    assert report["in_force"]["read"].startswith("before exit"), report["in_force"]
    return json.loads(lines[-1]), report


def test_torch_threads_in_the_report_are_torchs(tmp_path):
    own, report = python_run(tmp_path, "torch")
    torch = {r["setting"].split(" (")[0]: r["value"] for r in own_values(report, "torch")}
    assert torch == {"intra-op threads": own["torch_threads"],
                     "inter-op threads": own["torch_interop"]}, report["in_force"]
    # torch's intra-op count is the OpenMP cap in force (the monitor's, last).
    assert own["torch_threads"] == report["in_force"]["omp_cap"], report["in_force"]
    gomp = own_values(report, "openmp")
    assert gomp and all(r["value"] == own["torch_threads"] for r in gomp), report["in_force"]


def test_ort_session_options_in_the_report_are_orts(tmp_path):
    own, report = python_run(tmp_path, "ort")
    ort = {r["setting"]: r["value"] for r in own_values(report, "onnxruntime")}
    assert ort == {"intra_op_num_threads": own["ort_intra"],
                   "inter_op_num_threads": own["ort_inter"]}, report["in_force"]
    # Made alone for the whole budget, made again for the narrowed share: the
    # timeline lists the rebuild under the generation it was made for.
    rebuilt = [a for e in report["plan_timeline"] for a in e["applied"]
               if a.startswith("ONNX Runtime session made again")]
    assert rebuilt, report["plan_timeline"]


def test_tensorflow_pools_in_the_report_are_tensorflows(tmp_path):
    own, report = python_run(tmp_path, "tf")
    compute = [r for r in own_values(report, "tensorflow") if r["object"] == "thread pool Compute"]
    assert compute and compute[0]["value"] == own["tf_compute_threads"], report["in_force"]
