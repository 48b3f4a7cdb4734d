"""Integration tests: libparwidth.so preloaded into TensorFlow programs.

Runs with the TensorFlow environment: .venv/tf/bin/python -m pytest tests/integration/test_tf.py
(skipped where tensorflow is not installed, e.g. in the torch environment).

Each test starts examples/train_tf.py (or a C program on TF's C API) with and
without the preload and checks that three views agree with the report:
- TensorFlow's own: the sizes TensorFlow logs for the pools it creates
  (process_util.cc "Session inter op parallelism threads: N", local_device.cc
  "LocalDevice using CPU work thread pool: ..., num_threads=N"; TF_CPP_VMODULE).
  tf.config.threading and a Session's Python config only echo what the
  program asked, so they are checked to be left as the program set them.
- the OS's: the tf_Compute (inter-op) threads in /proc, and the affinity of
  every TensorFlow pool thread (Cpus_allowed_list, dumped by the program while
  alive) inside its pool's core set.
- the outputs: per-step losses and a checksum of the logits equal to the run
  without parwidth within a relative 1e-4 (thread counts change TF's
  summation order, so bit-equality is not expected; measured differences are
  ~1e-7 relative).
"""
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("tensorflow is not installed in this environment", allow_module_level=True)

from test_core import LIB, ROOT, clean_env, cpu_list, load  # noqa: E402

EXAMPLE = ROOT / "examples" / "train_tf.py"
TF_LOGS = {"TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "local_device=1,process_util=1"}
STEPS = "4"


def tf_run(tmp_path, tag, args=(), preload=True, cmd=None, **env):
    """Runs the example (or cmd); returns (program's JSON or None, report or None, stderr)."""
    out = tmp_path / f"{tag}.json"
    report = tmp_path / f"{tag}.report.json"
    # The test's own cache (function graphs remembered by an earlier run would
    # plan the eager context) and node registry (other governed processes on
    # the machine would change the share between TF's pools and the report).
    extra = dict(TF_LOGS, XDG_CACHE_HOME=tmp_path / "cache", PARWIDTH_NODE_DIR=tmp_path / "node")
    for k, v in env.items():
        extra[k if k.startswith("TF_") else "PARWIDTH_" + k] = str(v)
    if preload:
        extra["LD_PRELOAD"] = str(LIB)
        extra["PARWIDTH_REPORT"] = str(report)
    if cmd is None:
        cmd = [sys.executable, str(EXAMPLE), "--steps", STEPS, "--json", str(out), *args]
    p = subprocess.run([str(c) for c in cmd], env=clean_env(**extra), capture_output=True,
                       text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    return (load(out) if out.exists() else None,
            load(report) if preload else None, p.stderr)


def tf_view(stderr):
    """(inter-op, intra-op) pool sizes as TensorFlow logged them when it made them."""
    inter = re.findall(r"Session inter op parallelism threads: (\d+)", stderr)
    intra = re.findall(r"LocalDevice using CPU work thread pool: \S+ num_threads=(\d+)", stderr)
    assert inter and intra, "TensorFlow did not log its pool sizes:\n" + stderr[-2000:]
    # One global pool of each kind: the first creation sizes it.
    return int(inter[0]), int(intra[0])


def notes(report, setting_suffix):
    return [f for f in report["frameworks"]
            if f["name"] == "tensorflow" and f["setting"].endswith(setting_suffix)]


def one_note(report, suffix):
    found = notes(report, suffix)
    assert len(found) == 1, report["frameworks"]
    return found[0]


def check_outputs_match(base, gov):
    assert len(base["losses"]) == len(gov["losses"])
    for a, b in zip(base["losses"], gov["losses"]):
        assert b == pytest.approx(a, rel=1e-4)
    assert gov["checksum"] == pytest.approx(base["checksum"], rel=1e-4)
    assert gov["abs_checksum"] == pytest.approx(base["abs_checksum"], rel=1e-4)


def check_pool_threads_pinned(report, prog):
    """Every TensorFlow thread parwidth recorded runs inside its pool's core set
    (on its one core with PIN=core), as /proc says; the main thread is not narrowed."""
    alive = {t["tid"]: t for t in prog["threads"]}
    pid = report["pid"]
    assert cpu_list(alive[pid]["cpus"]) == frozenset(os.sched_getaffinity(0))
    core_sets = report["plan"]["core_sets"]
    tf_threads = [t for t in report["threads"] if "libtensorflow" in t["creator"]]
    assert tf_threads, report["threads"]
    for t in tf_threads:
        assert t["pinned"], t
        assert 0 <= t["pool"] < len(core_sets)
        if t["tid"] not in alive:
            continue  # a short-lived TF thread that ended before the dump
        cpus = cpu_list(alive[t["tid"]]["cpus"])
        assert cpus <= frozenset(core_sets[t["pool"]]), (t, alive[t["tid"]])
        if t["cpu"] is not None:
            assert cpus == {t["cpu"]}
    # The inter-op pool's threads (TF names them tf_Compute) are among them.
    compute = {t["tid"] for t in prog["threads"] if t["name"] == "tf_Compute"}
    assert compute <= {t["tid"] for t in tf_threads}
    return compute


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    d = tmp_path_factory.mktemp("tf_base")
    graph, _, graph_err = tf_run(d, "graph", preload=False)
    eager, _, eager_err = tf_run(d, "eager", ["--eager"], preload=False)
    return {"graph": (graph, tf_view(graph_err)), "eager": (eager, tf_view(eager_err))}


def test_session_follows_the_plan_from_its_graph(tmp_path, baseline):
    prog, report, err = tf_run(tmp_path, "gov")
    plan = report["plan"]
    # The plan came from the session's graph (forward + gradients of the CNN).
    assert report["graph"]["source"] == "tensorflow session graph"
    assert report["graph"]["heavy"] > 0 and report["graph"]["avg_width"] >= 1
    inter, intra = one_note(report, "session inter_op_parallelism_threads"), one_note(
        report, "session intra_op_parallelism_threads")
    assert inter["applied"] and int(inter["value"]) == plan["pools"]
    assert intra["applied"] and int(intra["value"]) == plan["threads"]
    # TensorFlow's view: the pools it made have those sizes.
    assert tf_view(err) == (plan["pools"], plan["threads"])
    pools = {f["setting"]: f for f in notes(report, "Compute")}
    assert int(pools["thread pool Compute"]["value"]) == plan["pools"]
    # The program's own Python config is untouched (nothing appears in it).
    assert prog["framework"]["session_config"] == {"inter_op_parallelism_threads": 0,
                                                   "intra_op_parallelism_threads": 0}
    assert "TF_NUM_INTEROP_THREADS" not in prog["env"]
    # The OS's view: one tf_Compute thread per pool, each pinned in its pool.
    compute = check_pool_threads_pinned(report, prog)
    assert len(compute) == plan["pools"]
    # Outputs: the same training run as without parwidth.
    check_outputs_match(baseline["graph"][0], prog)


def test_eager_context_plan_without_graph_and_from_model(tmp_path, baseline):
    prog, report, err = tf_run(tmp_path, "eager", ["--eager"])
    plan = report["plan"]
    assert report["graph"] is None  # an eager context exists before any graph
    inter = one_note(report, "eager context inter_op_parallelism_threads")
    intra = one_note(report, "eager context intra_op_parallelism_threads")
    # Without a graph there is no evidence about inter-op parallelism: TF's own
    # inter-op default stays (a 1-pool plan serialised tf.function branches),
    # intra-op threads follow the plan.
    assert not inter["applied"] and "no model graph" in inter["why"]
    assert intra["applied"]
    assert tf_view(err) == (baseline["eager"][1][0], plan["threads"])
    # Nothing leaks into the program's environment or its Python-side settings.
    assert prog["env"] == {}
    assert prog["framework"]["tf.config.threading"] == {"inter_op_parallelism_threads": 0,
                                                        "intra_op_parallelism_threads": 0}
    check_pool_threads_pinned(report, prog)
    check_outputs_match(baseline["eager"][0], prog)

    # With PARWIDTH_MODEL (the same CNN's GraphDef) the context is planned from it.
    model = tmp_path / "cnn.pb"
    tf_run(tmp_path, "save", ["--steps", "1", "--save-graph", str(model)], preload=False)
    prog_m, report_m, err_m = tf_run(tmp_path, "eager_model", ["--eager"], MODEL=model)
    assert report_m["graph"]["source"].endswith(str(model))
    assert "PARWIDTH_MODEL" in one_note(report_m, "eager context inter_op_parallelism_threads")["why"]
    assert tf_view(err_m) == (report_m["plan"]["pools"], report_m["plan"]["threads"])
    check_outputs_match(baseline["eager"][0], prog_m)


@pytest.mark.parametrize("mode", ["graph", "eager"])
def test_explicit_settings_kept_then_overridden(tmp_path, baseline, mode):
    # 3 and 3: no plan on this machine would choose them (and not TF's default either).
    args = ["--inter", "3", "--intra", "3"] + (["--eager"] if mode == "eager" else [])
    what = "session" if mode == "graph" else "eager context"
    prog, report, err = tf_run(tmp_path, "kept", args)
    assert tf_view(err) == (3, 3)
    for knob in ("inter", "intra"):
        n = one_note(report, f"{what} {knob}_op_parallelism_threads")
        assert not n["applied"] and n["value"] == "3" and "kept" in n["why"], n
    check_outputs_match(baseline[mode][0], prog)

    prog, report, err = tf_run(tmp_path, "over", args, OVERRIDE=1)
    plan = report["plan"]
    assert tf_view(err) == (plan["pools"], plan["threads"])
    for knob in ("inter", "intra"):
        n = one_note(report, f"{what} {knob}_op_parallelism_threads")
        assert n["applied"] and "replaced" in n["why"] and "OVERRIDE" in n["why"], n
    check_outputs_match(baseline[mode][0], prog)


def test_tf_environment_variable_kept(tmp_path):
    prog, report, err = tf_run(tmp_path, "env", TF_NUM_INTEROP_THREADS=3)
    inter, intra = tf_view(err)
    assert inter == 3
    assert intra == report["plan"]["threads"]
    n = one_note(report, "session inter_op_parallelism_threads")
    assert not n["applied"] and "TF_NUM_INTEROP_THREADS" in n["why"]
    assert one_note(report, "session intra_op_parallelism_threads")["applied"]


def test_observe_mode_changes_nothing(tmp_path, baseline):
    prog, report, err = tf_run(tmp_path, "observe", MODE="observe")
    assert tf_view(err) == baseline["graph"][1]
    for n in notes(report, "_op_parallelism_threads"):
        assert not n["applied"] and "observe" in n["why"]


def test_c_api_program(tmp_path):
    """A C program on TF's C API: the session is planned from the imported graph."""
    tf_dir = None
    for p in sys.path:
        cand = Path(p) / "tensorflow"
        if (cand / "libtensorflow_cc.so.2").exists() and (cand / "include").exists():
            tf_dir = cand
            break
    cc = next((c for c in ("cc", "gcc", "clang") if subprocess.run(
        ["which", c], capture_output=True).returncode == 0), None)
    if tf_dir is None or cc is None:
        pytest.skip("no TensorFlow C library/headers or no C compiler")
    exe = tmp_path / "tf_capi"
    subprocess.run([cc, "-O1", "-o", str(exe), str(ROOT / "tests" / "programs" / "tf_capi.c"),
                    f"-I{tf_dir / 'include'}", str(tf_dir / "libtensorflow_cc.so.2"),
                    str(tf_dir / "libtensorflow_framework.so.2"), f"-Wl,-rpath,{tf_dir}"],
                   check=True, capture_output=True, timeout=120)
    model = tmp_path / "cnn.pb"
    tf_run(tmp_path, "save", ["--steps", "1", "--save-graph", str(model)], preload=False)
    _, report, err = tf_run(tmp_path, "capi", cmd=[exe, model])
    assert report["graph"]["source"] == "tensorflow session graph"
    assert tf_view(err) == (report["plan"]["pools"], report["plan"]["threads"])
    assert one_note(report, "session inter_op_parallelism_threads")["applied"]
    # An explicit config set through TF_SetConfig is kept.
    _, report, err = tf_run(tmp_path, "capi_cfg", cmd=[exe, model, "3", "3"])
    assert tf_view(err) == (3, 3)
    assert not one_note(report, "session inter_op_parallelism_threads")["applied"]


def test_wide_and_deep_session_planned_from_its_embedding_graph(tmp_path):
    # The second example model: embedding lookups in parallel towers, a wider
    # graph than the CNN's. Its session is planned from its own graph.
    args = ["--model", "widedeep", "--batch", "32"]
    base, _, _ = tf_run(tmp_path, "wd_base", args, preload=False)
    prog, report, err = tf_run(tmp_path, "wd", args)
    g = report["graph"]
    assert g["source"] == "tensorflow session graph"
    assert g["avg_width"] >= 2, g  # the towers
    plan = report["plan"]
    if plan["source"] == "width":
        assert plan["pools"] == min(g["avg_width"], g["max_level_width"], plan["slots"])
    else:
        # Costed (the session graph's shapes are all known): the machine model's
        # pick, which takes the fewest threads among candidates within 1% of
        # the fastest (governor/schedule.h); 1 or 2 pools predict within 1% of
        # each other for this graph on 2 cores.
        assert plan["source"] == "model" and g["costs"] == "flops", (plan, g)
        best = min(c["seconds"] for c in plan["predicted"])
        chosen = [c for c in plan["predicted"]
                  if (c["pools"], c["intra"]) == (plan["pools"], plan["threads"])]
        assert chosen and chosen[0]["seconds"] <= best * 1.01 + 1e-12, plan
    assert tf_view(err) == (plan["pools"], plan["threads"])
    check_outputs_match(base, prog)


# ---------------------------------------------------------------- TF2 function graphs

KERAS_FIT = ROOT / "tests" / "programs" / "keras_fit.py"


def keras_run(tmp_path, tag, preload=True, model="dense", **env):
    """tests/programs/keras_fit.py (model.fit; by default on four parallel Dense
    branches); returns (program's JSON, report or None, stderr). The cache
    directory and the node registry are the test's own."""
    out = tmp_path / f"{tag}.json"
    report = tmp_path / f"{tag}.report.json"
    extra = dict(TF_LOGS, XDG_CACHE_HOME=tmp_path / "cache",
                 PARWIDTH_NODE_DIR=tmp_path / "node")
    extra.update({k: str(v) for k, v in env.items()})
    if preload:
        extra["LD_PRELOAD"] = str(LIB)
        extra["PARWIDTH_REPORT"] = str(report)
    p = subprocess.run([sys.executable, str(KERAS_FIT), "--model", model, "--json", str(out)],
                       env=clean_env(**extra), capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr[-3000:]
    return load(out), (load(report) if preload else None), p.stderr


def memory_files(tmp_path):
    d = tmp_path / "cache" / "parwidth"
    return sorted(d.glob("tf-functions-*.txt")) if d.exists() else []


def test_keras_fit_function_graphs_are_remembered_for_the_next_run(tmp_path):
    base, _, base_err = keras_run(tmp_path, "bare", preload=False)
    assert memory_files(tmp_path) == []

    # First run: the eager context exists before any function graph, so it is
    # planned without one; the training step's graph is read when TF adds it.
    prog1, rep1, err1 = keras_run(tmp_path, "first")
    assert rep1["graph"] is None
    readable = [f for f in rep1["functions"] if f["readable"]]
    assert readable, rep1["functions"]
    assert all(f["how"] == "TFE_ContextAddFunction" for f in readable)
    step = max(readable, key=lambda f: f["heavy"])
    # Forward: 4 branch MatMuls side by side; backward: the head's 2 and the 4
    # branches' weight gradients side by side again.
    assert step["heavy"] >= 11 and step["avg_width"] >= 2, step
    assert step["max_level_width"] >= 4, step
    assert rep1["function_memory"]["recalled"] is False
    assert rep1["function_memory"]["written"] == "yes"
    files = memory_files(tmp_path)
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    assert f"function {step['name']} " in files[0].read_text()
    check_outputs_match(base, prog1)

    # Second run of the same program (another --json path: not part of its
    # identity): the eager context is sized from the remembered graph.
    prog2, rep2, err2 = keras_run(tmp_path, "second")
    g, plan = rep2["graph"], rep2["plan"]
    assert g["source"] == f"tensorflow function graph {step['name']} (remembered)", g
    assert (g["heavy"], g["avg_width"]) == (step["heavy"], step["avg_width"])
    assert "remembered from an earlier run of this program" in plan["source_detail"], plan
    # Costed from the step's shapes (its weights' shapes learned from their updates), so
    # the plan is the machine model's (or a stored measurement's), not the width rule's.
    assert step["costs"] == "flops", step
    assert g["costs"] == "flops", g
    assert plan["source"] in ("model", "measured"), plan
    mem = rep2["function_memory"]
    assert mem["recalled"] is True and mem["function"] == step["name"]
    inter = one_note(rep2, "eager context inter_op_parallelism_threads")
    intra = one_note(rep2, "eager context intra_op_parallelism_threads")
    assert inter["applied"] and int(inter["value"]) == plan["pools"], inter
    assert intra["applied"] and int(intra["value"]) == plan["threads"], intra
    assert "remembered" in inter["why"], inter
    # TensorFlow's own view: the pools it logged making have the plan's sizes.
    assert tf_view(err2) == (plan["pools"], plan["threads"])
    # Its Python side only echoes what the program set (nothing).
    assert prog2["tf.config.threading"] == {"inter_op_parallelism_threads": 0,
                                            "intra_op_parallelism_threads": 0}
    check_outputs_match(base, prog2)
    assert len(memory_files(tmp_path)) == 1


@pytest.mark.parametrize("model", ["branches", "residual", "recurrent", "embedding"])
def test_keras_models_train_steps_are_costed_and_plan_the_next_run(tmp_path, model):
    # The kinds of Keras models users train (tests/programs/keras_fit.py --model):
    # Conv2D branches, residual blocks, LSTM and GRU layers, an embedding. Their
    # train steps hold convolution gradients, the tape's shape arithmetic,
    # While loops over TensorLists and sparse updates; each step's weights come
    # as resource arguments whose shapes TensorFlow leaves out of the FunctionDef
    # (read where it makes the function).
    prog1, rep1, _ = keras_run(tmp_path, "first", model=model)
    readable = [f for f in rep1["functions"] if f["readable"]]
    step = max(readable, key=lambda f: f["heavy"])
    assert step["costs"] == "flops", step
    # Each Conv2D and Dense layer's forward FLOPs come back at least twice in
    # its step (forward, and its weights' gradient); a kernel whose size were
    # guessed (1x1, unknown dims as 1) would fall far short of that.
    assert step["work_flops"] >= 1.8 * prog1["forward_flops"], (step, prog1["forward_flops"])
    assert rep1["function_memory"]["written"] == "yes"

    prog2, rep2, _ = keras_run(tmp_path, "second", model=model)
    g, plan = rep2["graph"], rep2["plan"]
    assert g["source"] == f"tensorflow function graph {step['name']} (remembered)", g
    assert g["costs"] == "flops", g
    assert plan["source"] == "model", plan
    assert rep2["function_memory"]["function"] == step["name"]
    assert prog2["losses"] and all(math.isfinite(v) for v in prog2["losses"])


def test_keras_fit_corrupt_function_memory_is_one_warning(tmp_path):
    base, _, _ = keras_run(tmp_path, "bare", preload=False)
    keras_run(tmp_path, "first")
    (path,) = memory_files(tmp_path)
    path.write_text(path.read_text().replace("function ", "function bad$name ", 1))
    prog, rep, err = keras_run(tmp_path, "corrupt")
    said = [w for w in rep["warnings"] if "function memory" in w]
    assert len(said) == 1 and str(path) in said[0], rep["warnings"]
    assert err.count("function memory") == 1, err[-3000:]
    # A normal run: planned without a graph, as a first run is, same results.
    assert rep["graph"] is None
    assert rep["function_memory"]["recalled"] is False
    assert not one_note(rep, "eager context inter_op_parallelism_threads")["applied"]
    check_outputs_match(base, prog)
    # The run's own graphs replace the damaged memory.
    assert rep["function_memory"]["written"] == "yes"
    assert "bad$name" not in path.read_text()
