"""Integration tests: ONNX Runtime sessions (hooks/ort.cpp, hooks/ort_capi.cpp,
preload/python/sitecustomize.py) from Python and from the C API.

Three views must agree: the report's `frameworks` entries, ORT's own view
(session.get_session_options() in Python; the threads a session starts), and
the kernel's (threads in /proc before and after the session was made). The
outputs must be the bare run's, bit for bit. The fixtures get fixed random
weights (examples/infer_ort.py). Needs .venv/ort (scripts/bootstrap).
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_core import BIN, FULL, LIB, ROOT, clean_env, load

ORT_PY = ROOT / ".venv" / "ort" / "bin" / "python"
SCRIPT = ROOT / "examples" / "infer_ort.py"
MODELS = ROOT / "tests" / "fixtures" / "models"
CAPI_SRC = ROOT / "tests" / "programs" / "ort_capi.c"

pytestmark = pytest.mark.skipif(not ORT_PY.exists(), reason=".venv/ort missing (scripts/bootstrap)")


@pytest.fixture(scope="module", autouse=True)
def two_cpus():
    if len(FULL) < 2:
        pytest.skip("these tests need at least 2 allowed CPUs")


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """model name -> the fixture with weights filled (written once)."""
    d = tmp_path_factory.mktemp("models")
    return {m: d / f"{m}.onnx" for m in ("googlenet", "squeezenet1_0")}


def infer(tmp_path, weights, model, *args, preload=True, name="out", env=None, **options):
    out, report = tmp_path / f"{name}.json", tmp_path / f"{name}.report.json"
    extra = {"PARWIDTH_" + k: str(v) for k, v in options.items()}
    extra.update(env or {})
    extra.setdefault("PARWIDTH_MONITOR", "off")
    if preload:
        extra.update(LD_PRELOAD=str(LIB), PARWIDTH_REPORT=str(report),
                     PARWIDTH_NODE_DIR=str(tmp_path / "node"))
    cmd = [str(ORT_PY), str(SCRIPT), "--model", str(MODELS / f"{model}.onnx"), "--filled",
           str(weights[model]), "--steps", "2", *map(str, args), "--json", str(out)]
    p = subprocess.run(cmd, env=clean_env(**extra), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return load(out), (load(report) if preload else None)


def ort_notes(report):
    return {f["setting"]: f for f in report["frameworks"] if f["name"] == "onnxruntime"}


def used_threads(report):
    used = [f for f in report["frameworks"] if f["setting"] == "session thread pools used"]
    assert len(used) == 1, report["frameworks"]
    return int(used[0]["value"].split("threads_started=")[1].split()[0])


@pytest.mark.parametrize("model,src", [("googlenet", "path"), ("squeezenet1_0", "path"),
                                       ("googlenet", "bytes")])
def test_python_session_gets_the_plan_three_views_agree(tmp_path, weights, model, src):
    # The paper's width rule, so that GoogLeNet's W = 2 exercises ORT's parallel
    # mode on any machine (the model's plan depends on the machine's costs; it
    # is checked against `parwidth plan` below).
    args = ["--bytes"] if src == "bytes" else []
    bare, _ = infer(tmp_path, weights, model, *args, preload=False, name="bare")
    view, report = infer(tmp_path, weights, model, *args, PLAN="width")
    plan = report["plan"]
    notes = ort_notes(report)
    assert report["graph"]["source"] == "onnxruntime session model"
    expect_pools = 2 if model == "googlenet" else 1  # W = 2 and W = 1 (docs/planning.md's table)
    assert plan["pools"] == min(expect_pools, len(FULL)) and plan["source"] == "width"
    # ORT's own view.
    opts = view["options"]
    assert opts["intra_op_num_threads"] == plan["threads"]
    assert notes["session intra_op_num_threads (Python)"]["applied"] is True
    if plan["pools"] > 1:
        assert opts["execution_mode"] == "ORT_PARALLEL"
        assert opts["inter_op_num_threads"] == plan["pools"]
        assert notes["session inter_op_num_threads (Python)"]["value"] == str(plan["pools"])
    else:
        assert opts["execution_mode"] == "ORT_SEQUENTIAL"
        assert not any("inter_op" in s for s in notes)
    # /proc: the threads the session started are what the report says ORT used:
    # each pool of n threads starts n - 1 (the caller is the n-th).
    started = view["tasks_after"] - view["tasks_before"]
    assert started == used_threads(report)
    inter = plan["pools"] if plan["pools"] > 1 else 0
    assert started == (plan["threads"] - 1) + max(inter - 1, 0)
    # Outputs: the same bits; the program's SessionOptions object as it set it.
    assert view["sums"] == bare["sums"]
    assert view["program_options"] == bare["program_options"]
    assert view["environ_pythonpath"] is None  # the startup hook left no trace


@pytest.mark.parametrize("model", ["googlenet", "squeezenet1_0"])
def test_session_planned_from_its_costs_as_parwidth_plan_says(tmp_path, weights, model):
    """By default a session's graph is costed (shapes from the model) and planned
    by the model, as `parwidth plan --model` plans the same file on this budget
    with the same (here: no) calibration; ORT's options follow that plan."""
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    p = subprocess.run([str(BIN / "parwidth"), "plan", "--model", str(MODELS / f"{model}.onnx"),
                        "--no-calibrate", "--json"], env=clean_env(**cache),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    want = json.loads(p.stdout)["plan"]
    assert want["source"] == "model", want
    view, report = infer(tmp_path, weights, model, env=cache)
    plan = report["plan"]
    assert plan["source"] == "model", plan
    assert (plan["pools"], plan["threads"]) == (want["pools"], want["threads"])
    assert report["graph"]["costs"] == "flops"
    assert view["options"]["intra_op_num_threads"] == plan["threads"]
    parallel = view["options"]["execution_mode"] == "ORT_PARALLEL"
    assert parallel == (plan["pools"] > 1)


def test_explicit_options_kept_and_replaced_with_override(tmp_path, weights):
    view, report = infer(tmp_path, weights, "squeezenet1_0", "--intra", 1)
    n = ort_notes(report)["session intra_op_num_threads (Python)"]
    assert n["applied"] is False and "kept" in n["why"]
    assert view["options"]["intra_op_num_threads"] == 1
    assert view["tasks_after"] - view["tasks_before"] == 0
    view, report = infer(tmp_path, weights, "squeezenet1_0", "--intra", 1, name="o", OVERRIDE=1)
    n = ort_notes(report)["session intra_op_num_threads (Python)"]
    assert n["applied"] is True and n["value"] == str(report["plan"]["threads"])
    assert view["options"]["intra_op_num_threads"] == report["plan"]["threads"]
    assert view["program_options"]["intra_op_num_threads"] == 1  # put back
    # The program's parallel mode and inter-op count are its own too. Two pools asked for:
    # whether the model plans googlenet with more than one depends on this machine's CPU.
    view, report = infer(tmp_path, weights, "googlenet", "--parallel", "--inter", 1, name="p",
                         POOLS=2)
    assert report["plan"]["pools"] == 2
    assert view["options"]["inter_op_num_threads"] == 1
    assert ort_notes(report)["session inter_op_num_threads (Python)"]["applied"] is False


def test_spinning_off_when_the_node_is_shared(tmp_path, weights):
    view, report = infer(tmp_path, weights, "squeezenet1_0")
    assert view["options"]["allow_spinning"] is None  # alone: ORT's default
    view, report = infer(tmp_path, weights, "squeezenet1_0", name="s", LOCAL_RANK=0, LOCAL_SIZE=2)
    assert view["options"]["allow_spinning"] == "0"
    n = [f for s, f in ort_notes(report).items() if s.startswith("session allow_spinning")]
    assert n and n[0]["applied"] is True
    # The program's own choice is kept.
    view, report = infer(tmp_path, weights, "squeezenet1_0", "--spin", 1, name="k", LOCAL_RANK=0,
                         LOCAL_SIZE=2)
    assert view["options"]["allow_spinning"] == "1"


def test_observe_mode_changes_nothing(tmp_path, weights):
    view, report = infer(tmp_path, weights, "googlenet", MODE="observe")
    assert view["options"]["intra_op_num_threads"] == 0
    assert view["options"]["execution_mode"] == "ORT_SEQUENTIAL"
    assert not any(f["applied"] for s, f in ort_notes(report).items()
                   if s.startswith("session ") and s != "session thread pools used")


# ---------------------------------------------------------------- the C API


@pytest.fixture(scope="module")
def capi(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    capi_dir = ROOT / ".venv" / "ort" / "lib" / "python3.11" / "site-packages" / "onnxruntime" / "capi"
    libs = sorted(capi_dir.glob("libonnxruntime.so.1.*"))
    if not libs:
        pytest.skip("the wheel's libonnxruntime.so not found")
    d = tmp_path_factory.mktemp("capi")
    (d / "libonnxruntime.so.1").symlink_to(libs[-1])  # the wheel ships only the full name
    exe = d / "ort_capi"
    subprocess.run([cc, "-O1", "-Wall", "-Werror", "-o", str(exe), str(CAPI_SRC), f"-L{d}",
                    "-l:libonnxruntime.so.1", f"-Wl,-rpath,{d}"], check=True)
    return exe


def capi_run(tmp_path, exe, weights, model, *args, preload=True, name="c", **options):
    report = tmp_path / f"{name}.json"
    extra = {"PARWIDTH_" + k: str(v) for k, v in options.items()}
    extra["PARWIDTH_MONITOR"] = "off"
    if preload:
        extra.update(LD_PRELOAD=str(LIB), PARWIDTH_REPORT=str(report),
                     PARWIDTH_NODE_DIR=str(tmp_path / "node"))
    p = subprocess.run([str(exe), str(weights[model]), *map(str, args)], env=clean_env(**extra),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), (load(report) if preload else None)


def test_c_api_program_governed(tmp_path, capi, weights):
    infer(tmp_path, weights, "googlenet", preload=False)  # writes the filled models
    infer(tmp_path, weights, "squeezenet1_0", preload=False)
    bare, _ = capi_run(tmp_path, capi, weights, "googlenet", preload=False)
    out, report = capi_run(tmp_path, capi, weights, "googlenet")
    assert out["sum"] == bare["sum"]
    plan = report["plan"]
    assert report["graph"]["source"] == "onnxruntime session model"
    notes = ort_notes(report)
    assert notes["session intra_op_num_threads (C API)"]["value"] == str(plan["threads"])
    if plan["pools"] > 1:
        assert notes["session execution_mode (C API)"]["value"] == "ORT_PARALLEL"
        assert notes["session inter_op_num_threads (C API)"]["value"] == str(plan["pools"])
    # /proc (the program counts its threads around the session's creation):
    # each pool of n threads starts n - 1, as the report says.
    inter = plan["pools"] if plan["pools"] > 1 else 0
    assert used_threads(report) == (plan["threads"] - 1) + max(inter - 1, 0)
    assert out["threads"] - out["threads_before"] == used_threads(report)
    # An explicit SetIntraOpNumThreads is kept; replaced with OVERRIDE=1.
    out, report = capi_run(tmp_path, capi, weights, "squeezenet1_0", 1, name="k")
    n = ort_notes(report)["session intra_op_num_threads (C API)"]
    assert n["applied"] is False and out["threads"] == out["threads_before"]
    out, report = capi_run(tmp_path, capi, weights, "squeezenet1_0", 1, name="o", OVERRIDE=1)
    n = ort_notes(report)["session intra_op_num_threads (C API)"]
    assert n["applied"] is True
    assert out["threads"] - out["threads_before"] == report["plan"]["threads"] - 1
