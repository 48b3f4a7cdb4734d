"""examples/engine under parwidth: the session hook and `parwidth sweep`.

What a user notices: the thread counts the engine's session reports it runs with
(`session: inter-op threads P, intra-op threads T`, printed by the driver from the
engine's own API), the report's frameworks list, and the files and summary sweep
writes. Run: PW_BUILD=build python -m pytest tests/integration/test_engine.py
"""
import json
import os
import re
import subprocess
import sys

import pytest

from test_core import BIN, ROOT, LIB, clean_env, load, run

ENGINE = BIN / "parwidth-engine"
PARWIDTH = BIN / "parwidth"
GEN = ROOT / "examples" / "engine" / "gen" / "gen_graphs.py"
SESSION = re.compile(r"session: inter-op threads (\d+), intra-op threads (\d+)")

pytestmark = pytest.mark.skipif(not ENGINE.exists(), reason="engine not built (no oneDNN)")


@pytest.fixture(scope="module")
def towers(tmp_path_factory):
    """Three branches (lengths 4, 2, 2): W = 2, max level width 3."""
    path = tmp_path_factory.mktemp("graphs") / "towers.json"
    subprocess.run([sys.executable, str(GEN), "towers", "--lengths", "4,2,2", "--channels", "8",
                    "--size", "8", "-o", str(path)], check=True)
    return path


def session_threads(proc):
    assert proc.returncode == 0, proc.stderr
    m = SESSION.search(proc.stdout)
    assert m, proc.stdout
    return int(m.group(1)), int(m.group(2))


def engine_notes(report):
    return {f["setting"]: f for f in report["frameworks"] if f["name"] == "engine"}


def test_ungoverned_engine_uses_every_logical_cpu(towers):
    n = len(os.sched_getaffinity(0))
    assert session_threads(run([ENGINE, towers, "--iterations", "1"], preload=False)) == (n, n)


def test_hook_sets_the_plan_into_the_session(tmp_path, towers):
    rep = tmp_path / "r.json"
    proc = run([ENGINE, towers, "--iterations", "1"], REPORT=rep)
    r = load(rep)
    assert r["graph"]["avg_width"] == 2 and r["graph"]["source"].startswith("engine session")
    assert session_threads(proc) == (r["plan"]["pools"], r["plan"]["threads"])
    notes = engine_notes(r)
    assert notes["inter_op_threads"]["applied"] and notes["intra_op_threads"]["applied"]
    assert notes["inter_op_threads"]["value"] == str(r["plan"]["pools"])


def test_pools_and_intra_options_reach_the_session(tmp_path, towers):
    proc = run([ENGINE, towers, "--iterations", "1"], POOLS=1, INTRA=2, NODE="off", REPORT=tmp_path / "r.json")
    assert session_threads(proc) == (1, 2)


def test_explicit_options_kept_unless_override(tmp_path, towers):
    rep = tmp_path / "r.json"
    proc = run([ENGINE, towers, "--iterations", "1", "--inter", "3", "--intra", "2"], REPORT=rep)
    assert session_threads(proc) == (3, 2)
    notes = engine_notes(load(rep))
    for k in ("inter_op_threads", "intra_op_threads"):
        assert not notes[k]["applied"] and "kept" in notes[k]["why"]

    proc = run([ENGINE, towers, "--iterations", "1", "--inter", "3", "--intra", "2"], REPORT=rep,
               OVERRIDE=1)
    r = load(rep)
    assert session_threads(proc) == (r["plan"]["pools"], r["plan"]["threads"])
    assert engine_notes(r)["inter_op_threads"]["applied"]


def test_observe_mode_changes_nothing(tmp_path, towers):
    rep = tmp_path / "r.json"
    n = len(os.sched_getaffinity(0))
    proc = run([ENGINE, towers, "--iterations", "1"], MODE="observe", REPORT=rep)
    assert session_threads(proc) == (n, n)
    assert not engine_notes(load(rep))["inter_op_threads"]["applied"]


def sweep(tmp_path, *args, cmd):
    return subprocess.run([str(PARWIDTH), "sweep", "--out", str(tmp_path / "out"), *args, "--", *cmd],
                          env=clean_env(), capture_output=True, text=True, timeout=300)


def test_sweep_writes_csv_heatmap_and_summary(tmp_path):
    cmd = ["sh", "-c", 'echo "time per iteration: 1.5 ms"']
    p = sweep(tmp_path, "--repeat", "2", "--pools", "1,2", "--intra", "1-2", "--metric",
              r"time per iteration: ([0-9.]+) ms", "--json", cmd=cmd)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    for k in ("plan", "best", "plan_over_best", "default_over_best", "intel_over_best", "tf",
              "tf_over_best", "grid"):
        assert k in s
    assert s["best"]["median"] == 1.5 and s["default_over_best"] == 1.0
    rows = (tmp_path / "out" / "sweep.csv").read_text().splitlines()
    assert rows[0] == "configuration,pools,intra,oversubscribed,min,median,max,runs"
    grid = [r for r in rows[1:] if r.startswith("grid,")]
    assert len(grid) == 4 and all(r.split(",")[7] == "1.5;1.5" for r in grid)
    assert {r.split(",")[0] for r in rows[1:]} == {"grid", "plan", "intel", "tf", "default"}
    svg = (tmp_path / "out" / "heatmap.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") == 4 and "pools 2" in svg
    # Not a terminal: one progress line per run on stderr.
    assert len([l for l in p.stderr.splitlines() if l.startswith("parwidth sweep: ")]) == 2 * 8

    p = sweep(tmp_path, "--repeat", "1", cmd=["true"])  # text summary, wall time
    assert p.returncode == 0, p.stderr
    assert "plan median / best median:" in p.stdout and "default median / best median:" in p.stdout
    assert "tf median / best median:" in p.stdout


def test_sweep_runs_each_configuration_once_a_round_in_orders_that_differ(tmp_path):
    """Interleaved rounds, each in an order of its own: in one fixed order the plan always ran
    right after the same grid cell, and what that run left behind landed on it every round."""
    cmd = ["sh", "-c", 'echo "time per iteration: 1 ms"']
    p = sweep(tmp_path, "--repeat", "4", "--pools", "1,2", "--intra", "1-2", "--metric",
              r"time per iteration: ([0-9.]+) ms", cmd=cmd)
    assert p.returncode == 0, p.stderr
    heads = re.findall(r"^=== (.*), repeat (\d+)$", (tmp_path / "out" / "runs.log").read_text(), re.M)
    # The plan's label gains its pools and intra once its report has been read.
    heads = [(label.split(" (")[0] if label.startswith("plan") else label, r) for label, r in heads]
    rounds = [[label for label, r in heads if int(r) == k] for k in range(1, 5)]
    assert [label for label, _ in heads] == sum(rounds, [])  # round by round, never mixed
    labels = set(rounds[0])
    assert len(labels) == 8  # 4 grid cells, plan, intel, tf, default
    assert all(len(r) == 8 and set(r) == labels for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1
    before = {label: {r[r.index(label) - 1] if r.index(label) else None for r in rounds}
              for label in labels}
    assert all(len(b) > 1 for b in before.values()), before


def test_sweep_default_grid_oversubscribes_up_to_twice_the_cores(tmp_path):
    """Without lists: pools 1..cores x intra 1..2 x cores with pools * intra <= 2 x cores, the
    pairs above the cores marked, and TensorFlow's default (logical CPUs for both)."""
    cmd = ["sh", "-c", 'echo "time per iteration: 2 ms"']
    p = sweep(tmp_path, "--repeat", "1", "--metric", r"time per iteration: ([0-9.]+) ms", "--json",
              cmd=cmd)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    cores, cpus = s["cores"], len(os.sched_getaffinity(0))
    want = {(pl, t) for pl in range(1, cores + 1) for t in range(1, 2 * cores + 1) if pl * t <= 2 * cores}
    assert {(g["pools"], g["intra"]) for g in s["grid"]} == want
    assert all(g["oversubscribed"] == (g["pools"] * g["intra"] > cores) for g in s["grid"])
    assert any(g["oversubscribed"] for g in s["grid"])
    assert (s["tf"]["pools"], s["tf"]["intra"]) == (cpus, cpus)
    rows = [r.split(",") for r in (tmp_path / "out" / "sweep.csv").read_text().splitlines()[1:]]
    assert {(int(r[1]), int(r[2])) for r in rows if r[0] == "grid" and r[3] == "1"} == \
        {pt for pt in want if pt[0] * pt[1] > cores}
    svg = (tmp_path / "out" / "heatmap.svg").read_text()
    assert svg.count("stroke-dasharray") == sum(1 for pt in want if pt[0] * pt[1] > cores)


def test_sweep_applies_each_configuration_to_the_engine(tmp_path, towers):
    p = sweep(tmp_path, "--repeat", "1", "--pools", "1,2", "--intra", "1,2,4", "--metric",
              r"time per iteration: ([0-9.]+) ms", cmd=[str(ENGINE), str(towers), "--iterations", "2"])
    assert p.returncode == 0, p.stderr
    log = (tmp_path / "out" / "runs.log").read_text()
    for pools in (1, 2):
        for intra in (1, 2, 4):  # 2 x 4: oversubscribed on any machine under 8 cores
            block = log.split(f"=== pools={pools} intra={intra}, repeat 1\n")[1]
            assert SESSION.search(block).groups() == (str(pools), str(intra))


def test_profile_times_every_operator_at_each_team_size(towers):
    p = run([ENGINE, towers, "--iterations", "2", "--profile", "--profile-threads", "1,2"], preload=False)
    assert p.returncode == 0, p.stderr
    assert "profile: team sizes 1 2" in p.stdout
    ops = [l.split() for l in p.stdout.splitlines() if l.startswith("profile: op ")]
    graph = json.loads(towers.read_text())
    assert len(ops) == len(graph["nodes"])
    assert {o[o.index("name") + 1] for o in ops} == {n["name"] for n in graph["nodes"]}
    for o in ops:
        times = o[o.index("ms") + 1:o.index("name")]
        assert len(times) == 2 and all(float(t) >= 0 for t in times)
    # The branches join at the end: that op reads three, the first op of each reads none.
    assert sum(1 for o in ops if o[5] == "-") == 3 and any(len(o[5].split(",")) == 3 for o in ops)
    work = [float(x) for x in re.search(r"profile: work ms (.*)", p.stdout).group(1).split()]
    span = [float(x) for x in re.search(r"profile: span ms (.*)", p.stdout).group(1).split()]
    assert len(work) == len(span) == 2 and all(0 < sp <= w for sp, w in zip(span, work))
    p = run([ENGINE, towers, "--profile-threads", "0"], preload=False)
    assert p.returncode == 2 and "--profile-threads" in p.stderr


def test_sweep_failures_and_usage(tmp_path):
    p = sweep(tmp_path, "--repeat", "1", cmd=["false"])
    assert p.returncode == 1 and "run failed: pools=1 intra=1" in p.stderr
    p = sweep(tmp_path, "--repeat", "1", "--metric", "x: ([0-9]+)", cmd=["true"])
    assert p.returncode == 1 and "no match for --metric" in p.stderr
    for bad in (["--pools", "0"], ["--repeat", "x"], ["--metric", "no group"], ["--bogus"]):
        p = sweep(tmp_path, *bad, cmd=["true"])
        assert p.returncode == 2, (bad, p.stderr)


def test_graph_is_costed_at_the_batch_and_size_the_session_runs_at(tmp_path):
    """The session's options carry the batch and image size it runs at: the hook costs the
    graph at those (not at the file's batch 1), unless PARWIDTH_INPUT_SHAPES says otherwise."""
    model = ROOT / "tests" / "fixtures" / "models" / "squeezenet1_0.onnx"

    def graph_of(name, args, **opts):
        rep = tmp_path / f"{name}.json"
        proc = run([ENGINE, model, "--iterations", "1", *args], REPORT=rep, **opts)
        assert proc.returncode == 0, proc.stderr
        r = load(rep)
        return r["graph"], engine_notes(r).get("input shapes")

    one, note1 = graph_of("b1", ["--batch", "1", "--image-size", "64"])
    three, note3 = graph_of("b3", ["--batch", "3", "--image-size", "64"])
    wide, _ = graph_of("b1hw96", ["--batch", "1", "--image-size", "96"])
    user, user_note = graph_of("user", ["--batch", "3", "--image-size", "64"],
                               INPUT_SHAPES="input=1x3x64x64")
    assert note3["applied"] and note3["value"] == "batch 3, image size 64", note3
    assert note1["value"] == "batch 1, image size 64"
    # Every operator of a CNN is linear in the batch (the report keeps 6 digits).
    assert three["work_flops"] == pytest.approx(3 * one["work_flops"], rel=1e-5)
    assert wide["work_flops"] > 2 * one["work_flops"]  # (96/64)^2 = 2.25, less the edges
    assert len({one["fingerprint"], three["fingerprint"], wide["fingerprint"]}) == 3
    # The user's shapes win over the session's options.
    assert user_note is None
    assert user["work_flops"] == one["work_flops"] and user["fingerprint"] == one["fingerprint"]
