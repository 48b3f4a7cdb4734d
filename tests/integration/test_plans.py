"""Plans from operator costs: what `parwidth plan` and a governed process's report say
about the plan's source, with an empty cache, a calibration, and a bad calibration; plans
that remember (`parwidth tune`, `sweep --save`, `parwidth plans`); `parwidth run`'s
calibration."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_core import BIN, LIB, ROOT, clean_env

PARWIDTH = BIN / "parwidth"
TWO_CORES = "synthetic:package:1 core:2 pu:1"

# Two independent towers of two heavy operators with their FLOPs: W = 2.
TOWERS = {"name": "towers", "nodes": [
    {"name": "a", "op": "Conv", "flops": 2e8},
    {"name": "b", "op": "Conv", "inputs": ["a"], "flops": 2e8},
    {"name": "c", "op": "Conv", "flops": 2e8},
    {"name": "d", "op": "Conv", "inputs": ["c"], "flops": 2e8},
]}


@pytest.fixture
def towers(tmp_path):
    p = tmp_path / "towers.json"
    p.write_text(json.dumps(TOWERS))
    return p


def plan(cache, *args, **env):
    e = clean_env(XDG_CACHE_HOME=cache, **env)
    return subprocess.run([str(PARWIDTH), "plan", *map(str, args)], env=e, capture_output=True,
                          text=True, timeout=120)


def budget_cores(tmp_path):
    """The physical cores of this process's budget, as parwidth plans them (SMT siblings are
    one core: two CPUs of one core give the helper no second core)."""
    p = plan(tmp_path / "budget-cache", "--json", "--no-calibrate")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["budget"]["cores"]


def test_calibration_measures_across_two_cores_whatever_the_users_openmp_binding(tmp_path, towers):
    """The user's OMP_PROC_BIND=close and OMP_PLACES=cores (a common HPC setting) do not reach
    the helper: with them libgomp binds the helper's first thread to one core as it starts, so
    the helper saw one CPU, measured its wake-ups on that one core (a few us where a wake-up
    across cores costs tens on a virtual machine) and no team wake-up at all."""
    if not (BIN / "parwidth-calibrate").exists():
        pytest.skip("parwidth-calibrate not built (no OpenMP)")
    if budget_cores(tmp_path) < 2:
        pytest.skip("one physical core in the budget: no second core to wake a thread on")
    cache = tmp_path / "cache"
    p = subprocess.run([str(PARWIDTH), "calibrate"], capture_output=True, text=True, timeout=120,
                       env=clean_env(XDG_CACHE_HOME=cache, OMP_PROC_BIND="close", OMP_PLACES="cores"))
    assert p.returncode == 0, p.stderr
    text = next((cache / "parwidth").iterdir()).read_text()
    # Measured: a helper that printed none would have it copied from wake_s (the file's
    # fallback), and the two are measured two different ways.
    values = dict(l.split(" ", 1) for l in text.splitlines() if l.endswith(tuple("0123456789")))
    assert "team_wake_s" in values and values["team_wake_s"] != values["wake_s"], text
    shown = subprocess.run([str(PARWIDTH), "calibrate", "--show"], capture_output=True, text=True,
                           timeout=60, env=clean_env(XDG_CACHE_HOME=cache))
    assert shown.returncode == 0 and "waking a team" in shown.stdout, shown.stdout


def test_calibrate_measures_sockets_and_smt_where_the_budget_has_them_and_says_so_where_not(tmp_path):
    """Issue 33: the cross-socket team cost and a socket's bandwidth are measured only on a
    budget of several sockets, the SMT gain only with siblings; otherwise calibrate says so,
    writes no such key (no made-up measurement) and --show names the built-in values."""
    if not (BIN / "parwidth-calibrate").exists():
        pytest.skip("parwidth-calibrate not built (no OpenMP)")
    if budget_cores(tmp_path) < 2:
        pytest.skip("one physical core in the budget")
    topo = json.loads(subprocess.run([str(PARWIDTH), "topo", "--json"], capture_output=True, text=True,
                                     timeout=60, env=clean_env(XDG_CACHE_HOME=tmp_path / "t"),
                                     check=True).stdout)["budget"]
    sockets, siblings = topo["sockets"] > 1, len(topo["cpus"]) > topo["cores"]
    cache = tmp_path / "cache"
    p = subprocess.run([str(PARWIDTH), "calibrate"], capture_output=True, text=True, timeout=180,
                       env=clean_env(XDG_CACHE_HOME=cache))
    assert p.returncode == 0, p.stderr
    text = next((cache / "parwidth").iterdir()).read_text()
    keys = {l.split(" ", 1)[0] for l in text.splitlines()}
    assert ("span_factor" in keys) == sockets and ("socket_bytes_per_s" in keys) == sockets, text
    assert ("smt_gain" in keys) == siblings, text
    assert ("one socket" in p.stderr) == (not sockets), p.stderr
    assert ("no SMT siblings" in p.stderr) == (not siblings), p.stderr
    shown = subprocess.run([str(PARWIDTH), "calibrate", "--show"], capture_output=True, text=True,
                           timeout=60, env=clean_env(XDG_CACHE_HOME=cache)).stdout
    assert "a team across sockets" in shown and "an SMT sibling adds" in shown, shown
    assert ("(measured)" in shown.split("a team across sockets")[1].splitlines()[0]) == sockets, shown


def test_model_plan_with_the_builtin_model_lists_every_candidate(tmp_path, towers):
    p = plan(tmp_path / "cache", "--model", towers, "--topology", TWO_CORES, "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)["plan"]
    assert d["source"] == "model"
    assert "built-in" in d["source_detail"]
    # pools x intra <= 2 x cores, at most one pool per core: (1,1..4), (2,1..2)
    assert sorted((c["pools"], c["intra"]) for c in d["predicted"]) == [
        (1, 1), (1, 2), (1, 3), (1, 4), (2, 1), (2, 2)]
    chosen = [c for c in d["predicted"] if (c["pools"], c["intra"]) == (d["pools"], d["threads"])]
    assert chosen and chosen[0]["seconds"] <= 1.01 * min(c["seconds"] for c in d["predicted"])
    assert not (tmp_path / "cache").exists()  # a described machine is never calibrated


def test_width_mode_and_unknown_costs_use_the_width_rule(tmp_path, towers):
    p = plan(tmp_path, "--model", towers, "--topology", TWO_CORES, "--json", PARWIDTH_PLAN="width")
    d = json.loads(p.stdout)["plan"]
    assert (d["source"], d["pools"], d["threads"], d["predicted"]) == ("width", 2, 1, [])
    unit = dict(TOWERS, nodes=[{k: v for k, v in n.items() if k != "flops"} for n in TOWERS["nodes"]])
    (tmp_path / "unit.json").write_text(json.dumps(unit))
    p = plan(tmp_path, "--model", tmp_path / "unit.json", "--topology", TWO_CORES, "--json")
    d = json.loads(p.stdout)["plan"]
    assert d["source"] == "width" and "costs unknown" in d["source_detail"]


def test_plan_calibrates_once_then_uses_the_calibration(tmp_path, towers):
    if not (BIN / "parwidth-calibrate").exists():
        pytest.skip("parwidth-calibrate not built (no OpenMP)")
    cache = tmp_path / "cache"
    p = plan(cache, "--model", towers, "--json")
    assert p.returncode == 0, p.stderr
    assert "calibrating" in p.stderr
    files = list((cache / "parwidth").iterdir())
    assert len(files) == 1 and files[0].name.startswith("calibration-")
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    # The helper measured how long waking a sleeping thread takes (the schedule's wake_s),
    # rather than the file keeping the built-in 1e-05.
    wake = [l for l in files[0].read_text().splitlines() if l.startswith("wake_s ")]
    assert len(wake) == 1 and 0 < float(wake[0].split()[1]) < 0.1, wake
    assert float(wake[0].split()[1]) != 1e-05, wake
    # And what signalling a sleeping pool costs its signaller (the schedule's notify_s).
    notify = [l for l in files[0].read_text().splitlines() if l.startswith("notify_s ")]
    assert len(notify) == 1 and 0 < float(notify[0].split()[1]) < 0.1, notify
    assert float(notify[0].split()[1]) != 5e-06, notify
    # And what an OpenMP team's region pays for waking its sleeping workers, on two cores
    # (a budget of one core has no team of two to measure).
    team = [l for l in files[0].read_text().splitlines() if l.startswith("team_wake_s ")]
    assert len(team) == 1 and 0 < float(team[0].split()[1]) < 0.1, team
    if json.loads(p.stdout)["budget"]["cores"] >= 2:  # else none measured: wake_s stands in
        assert team[0].split()[1] != wake[0].split()[1], (team, wake)
    assert json.loads(p.stdout)["plan"]["source_detail"].startswith("calibration measured")
    again = plan(cache, "--model", towers, "--json")
    assert "calibrating" not in again.stderr
    assert json.loads(again.stdout)["plan"]["source_detail"].startswith("calibration measured")

    # A corrupt file: one warning, the built-in model, in the CLI and in a governed process.
    files[0].write_text("parwidth-calibration 1\nmachine x\n")
    p = plan(cache, "--model", towers, "--json", "--no-calibrate")
    assert p.stderr.count("corrupt") == 1, p.stderr
    assert "built-in" in json.loads(p.stdout)["plan"]["source_detail"]
    report = tmp_path / "r.json"
    e = clean_env(XDG_CACHE_HOME=cache, LD_PRELOAD=LIB, PARWIDTH_MODEL=towers,
                  PARWIDTH_REPORT=report)
    prog = "import threading; t = threading.Thread(target=int); t.start(); t.join()"
    r = subprocess.run([sys.executable, "-c", prog], env=e, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0
    rep = json.loads(report.read_text())
    assert rep["plan"]["source"] == "model"
    assert any("corrupt" in w for w in rep["warnings"])
    assert r.stderr.count("corrupt") <= 1


def test_calibrate_show_without_a_calibration_fails_cleanly(tmp_path):
    e = clean_env(XDG_CACHE_HOME=tmp_path)
    p = subprocess.run([str(PARWIDTH), "calibrate", "--show"], env=e, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1
    assert "built-in" in p.stdout


# ---------------------------------------------------------------- plans that remember
# `parwidth tune`, `parwidth sweep --save`, `parwidth plans [--forget]` with the real engine,
# and `parwidth run`'s calibration. Every test has its own cache (XDG_CACHE_HOME=tmp_path).

ENGINE = BIN / "parwidth-engine"
GEN = ROOT / "examples" / "engine" / "gen" / "gen_graphs.py"
FIXTURE = ROOT / "tests" / "fixtures" / "models" / "squeezenet1_0.onnx"
SESSION = re.compile(r"session: inter-op threads (\d+), intra-op threads (\d+)")
needs_engine = pytest.mark.skipif(not ENGINE.exists(), reason="engine not built (no oneDNN)")


def pw(cache, *args, timeout=600, **env):
    e = clean_env(XDG_CACHE_HOME=cache, **env)
    return subprocess.run([str(PARWIDTH), *map(str, args)], env=e, capture_output=True, text=True,
                          timeout=timeout)


def governed(cache, tmp_path, cmd, **env):
    """One governed run of cmd; its report and the session's thread counts."""
    report = tmp_path / "governed.json"
    e = clean_env(XDG_CACHE_HOME=cache, LD_PRELOAD=LIB, PARWIDTH_REPORT=report, PARWIDTH_NODE="off",
                  **env)
    p = subprocess.run([str(c) for c in cmd], env=e, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    m = SESSION.search(p.stdout)
    assert m, p.stdout
    return json.loads(report.read_text()), (int(m.group(1)), int(m.group(2))), p


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = tmp_path_factory.mktemp("graphs") / "towers.json"
    subprocess.run([sys.executable, str(GEN), "towers", "--lengths", "3,2", "--channels", "8",
                    "--size", "8", "-o", str(path)], check=True)
    return path


@needs_engine
def test_tune_stores_a_plan_that_the_next_governed_run_uses(tmp_path):
    cache = tmp_path / "cache"
    engine = [ENGINE, FIXTURE, "--iterations", "1", "--warmup", "0"]
    # A small budget: the two runs every tune makes, then it stops and stores the best.
    t = pw(cache, "tune", "--budget-s", "1", "--repeat", "1", "--json", "--", *engine)
    assert t.returncode == 0, t.stderr
    res = json.loads(t.stdout)
    measured = [c for c in res["candidates"] if c["runs"]]
    assert len(measured) >= 2
    first = res["candidates"][0]
    assert (first["pools"], first["intra"]) == (res["predicted"]["pools"],
                                                res["predicted"]["intra"])
    best = res["best"]
    assert (best["pools"], best["intra"]) in {(c["pools"], c["intra"]) for c in measured}
    stored = Path(res["stored"])
    assert stored.parent == cache / "parwidth" and res["fingerprint"] in stored.name
    assert oct(stored.stat().st_mode & 0o777) == "0o600"

    # The next governed run of that graph: source measured, the stored counts in the session.
    rep, session, _ = governed(cache, tmp_path, engine)
    plan = rep["plan"]
    assert rep["graph"]["fingerprint"] == res["fingerprint"]
    assert plan["source"] == "measured", plan
    assert (plan["pools"], plan["threads"]) == (best["pools"], best["intra"])
    assert session == (best["pools"], best["intra"])
    assert plan["measured"]["by"] == "tune" and plan["measured"]["runs"] == best["runs"]
    assert "parwidth tune" in plan["source_detail"] and "UTC" in plan["source_detail"]

    # `parwidth plan --model` shows it too, and `parwidth plans` lists it here.
    p = pw(cache, "plan", "--model", FIXTURE, "--json", "--no-calibrate")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["graph"]["fingerprint"] == res["fingerprint"]
    assert d["plan"]["source"] == "measured"
    assert (d["plan"]["pools"], d["plan"]["threads"]) == (best["pools"], best["intra"])
    listed = json.loads(pw(cache, "plans", "--json").stdout)["plans"]
    assert [(x["fingerprint"], x["here"], x["by"], x["pools"], x["intra"]) for x in listed] == [
        (res["fingerprint"], True, "tune", best["pools"], best["intra"])]
    text = pw(cache, "plans").stdout
    assert res["fingerprint"] in text and "[here]" in text and "parwidth tune" in text

    # Forgotten: the next run plans from the model again.
    f = pw(cache, "plans", "--forget", res["fingerprint"][:6])
    assert f.returncode == 0 and "removed 1" in f.stdout, f.stderr
    assert not stored.exists()
    assert json.loads(pw(cache, "plans", "--json").stdout)["plans"] == []
    rep, session, _ = governed(cache, tmp_path, engine)
    assert rep["plan"]["source"] == "model" and rep["plan"]["measured"] is None
    assert session == (rep["plan"]["pools"], rep["plan"]["threads"])


@needs_engine
def test_sweep_save_stores_the_grid_best_or_its_tie_with_fewer_threads(tmp_path, generated):
    cache = tmp_path / "cache"
    engine = [ENGINE, generated, "--iterations", "1"]
    s = pw(cache, "sweep", "--save", "--repeat", "1", "--pools", "1,2", "--intra", "1,2",
           "--json", "--out", tmp_path / "out", "--", *engine)
    assert s.returncode == 0, s.stderr
    res = json.loads(s.stdout)
    # What is stored: the fewest threads (then pools) among the grid's medians within 2% of the
    # lowest, worked out here from the sweep's own numbers.
    grid = res["grid"]
    low = min(c["median"] for c in grid)
    tied = [c for c in grid if c["median"] <= low * 1.02]
    want = min(tied, key=lambda c: (c["pools"] * c["intra"], c["pools"], c["median"]))
    best = res["stored"]
    assert (best["pools"], best["intra"]) == (want["pools"], want["intra"]), res
    assert res["saved"] and Path(res["saved"]).exists()
    rep, session, _ = governed(cache, tmp_path, engine)
    assert rep["graph"]["fingerprint"] == res["fingerprint"]
    assert rep["plan"]["source"] == "measured"
    assert (rep["plan"]["pools"], rep["plan"]["threads"]) == (best["pools"], best["intra"])
    assert session == (best["pools"], best["intra"])
    assert rep["plan"]["measured"]["by"] == "sweep --save"
    assert rep["plan"]["measured"]["median"] == best["median"]
    listed = json.loads(pw(cache, "plans", "--json").stdout)["plans"]
    assert [(x["by"], x["here"]) for x in listed] == [("sweep --save", True)]
    # PARWIDTH_PLAN=width and the user's counts still win over a stored plan.
    rep, _, _ = governed(cache, tmp_path, engine, PARWIDTH_PLAN="width")
    assert rep["plan"]["source"] == "width"
    assert pw(cache, "plans", "--forget", "--all").stdout.startswith("removed 1")
    rep, _, _ = governed(cache, tmp_path, engine)
    assert rep["plan"]["source"] != "measured"


@needs_engine
def test_a_bad_stored_plan_is_one_warning_and_the_model_plans(tmp_path):
    cache = tmp_path / "cache"
    engine = [ENGINE, FIXTURE, "--iterations", "1", "--warmup", "0"]
    t = pw(cache, "tune", "--budget-s", "1", "--repeat", "1", "--json", "--", *engine)
    assert t.returncode == 0, t.stderr
    stored = Path(json.loads(t.stdout)["stored"])
    stored.write_text(stored.read_text()[:40])  # truncated
    rep, _, p = governed(cache, tmp_path, engine)
    assert rep["plan"]["source"] == "model"
    assert len([w for w in rep["warnings"] if "measured plan" in w and "corrupt" in w]) == 1
    assert p.stderr.count("measured plan") == 1
    listed = json.loads(pw(cache, "plans", "--json").stdout)["plans"]
    assert len(listed) == 1 and not listed[0]["valid"] and "truncated" in listed[0]["why"]
    # A symlink in its place: refused the same way.
    stored.unlink()
    (tmp_path / "elsewhere.txt").write_text("parwidth-plan 1\n")
    stored.symlink_to(tmp_path / "elsewhere.txt")
    rep, _, _ = governed(cache, tmp_path, engine)
    assert rep["plan"]["source"] == "model"
    assert any("measured plan" in w and "symlink" in w for w in rep["warnings"])


def test_tune_and_plans_usage(tmp_path):
    cache = tmp_path / "cache"
    p = pw(cache, "tune", "--budget-s", "5", "--", "true")
    assert p.returncode == 1 and "no graph fingerprint" in p.stderr
    assert not (cache / "parwidth").exists() or not list((cache / "parwidth").glob("plan-*"))
    for bad in (["tune", "--budget-s", "0", "--", "true"], ["tune", "--repeat", "x", "--", "true"],
                ["tune", "--metric", "no group", "--", "true"], ["tune"], ["plans", "--forget"],
                ["plans", "--all"], ["plans", "--bogus"]):
        assert pw(cache, *bad).returncode == 2, bad
    p = pw(cache, "plans")
    assert p.returncode == 0 and "no measured plans stored" in p.stdout
    p = pw(cache, "plans", "--forget", "0123456789abcdef")
    assert p.returncode == 1 and "no stored plan" in p.stderr


def test_run_calibrates_once_per_machine_and_budget(tmp_path):
    if not (BIN / "parwidth-calibrate").exists():
        pytest.skip("parwidth-calibrate not built (no OpenMP)")
    prog = [sys.executable, "-c", "print('ran')"]
    skipped = pw(tmp_path / "skip", "run", "--no-calibrate", "--", *prog)
    assert skipped.returncode == 0 and skipped.stdout == "ran\n"
    assert "calibrating" not in skipped.stderr
    assert not (tmp_path / "skip" / "parwidth").exists()
    off = pw(tmp_path / "off", "run", "--mode", "off", "--", *prog)
    assert "calibrating" not in off.stderr and not (tmp_path / "off" / "parwidth").exists()

    cache = tmp_path / "cache"
    first = pw(cache, "run", "--", *prog)
    assert first.returncode == 0 and first.stdout == "ran\n", first.stderr
    assert first.stderr.count("calibrating") == 1
    files = [f.name for f in (cache / "parwidth").iterdir() if f.name.startswith("calibration-")]
    assert len(files) == 1
    again = pw(cache, "run", "--", *prog)
    assert again.returncode == 0 and "calibrating" not in again.stderr
    # The program's exit code is its own, calibrated or not.
    assert pw(tmp_path / "rc", "run", "--", sys.executable, "-c", "raise SystemExit(3)").returncode == 3


def test_a_budget_of_the_same_shape_on_other_cpus_reuses_the_calibration(tmp_path, towers):
    """Calibrations are named by the budget's shape (cores per socket, PUs, quota), so a job
    placed on other CPUs of the same machine does not calibrate again."""
    if not (BIN / "parwidth-calibrate").exists():
        pytest.skip("parwidth-calibrate not built (no OpenMP)")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs 2 allowed CPUs")
    cache = tmp_path / "cache"
    first = plan(cache, "--model", towers, "--cpus", cpus[0], "--json")
    assert first.returncode == 0 and "calibrating" in first.stderr, first.stderr
    other = plan(cache, "--model", towers, "--cpus", cpus[-1], "--json")
    assert other.returncode == 0 and "calibrating" not in other.stderr, other.stderr
    d = json.loads(other.stdout)["plan"]
    assert d["source_detail"].startswith("calibration measured"), d
    assert len(list((cache / "parwidth").glob("calibration-*.txt"))) == 1
