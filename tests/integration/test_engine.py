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
    for k in ("plan", "best", "plan_over_best", "default_over_best", "intel_over_best", "grid"):
        assert k in s
    assert s["best"]["median"] == 1.5 and s["default_over_best"] == 1.0
    rows = (tmp_path / "out" / "sweep.csv").read_text().splitlines()
    assert rows[0] == "configuration,pools,intra,min,median,max,runs"
    grid = [r for r in rows[1:] if r.startswith("grid,")]
    assert len(grid) == 4 and all(r.split(",")[6] == "1.5;1.5" for r in grid)
    assert {r.split(",")[0] for r in rows[1:]} == {"grid", "plan", "intel", "default"}
    svg = (tmp_path / "out" / "heatmap.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") == 4 and "pools 2" in svg
    # Not a terminal: one progress line per run on stderr.
    assert len([l for l in p.stderr.splitlines() if l.startswith("parwidth sweep: ")]) == 2 * 7

    p = sweep(tmp_path, "--repeat", "1", cmd=["true"])  # text summary, wall time
    assert p.returncode == 0, p.stderr
    assert "plan median / best median:" in p.stdout and "default median / best median:" in p.stdout


def test_sweep_applies_each_configuration_to_the_engine(tmp_path, towers):
    p = sweep(tmp_path, "--repeat", "1", "--pools", "1,2", "--intra", "1,2", "--metric",
              r"time per iteration: ([0-9.]+) ms", cmd=[str(ENGINE), str(towers), "--iterations", "2"])
    assert p.returncode == 0, p.stderr
    log = (tmp_path / "out" / "runs.log").read_text()
    for pools in (1, 2):
        for intra in (1, 2):
            block = log.split(f"=== pools={pools} intra={intra}, repeat 1\n")[1]
            assert SESSION.search(block).groups() == (str(pools), str(intra))


def test_sweep_failures_and_usage(tmp_path):
    p = sweep(tmp_path, "--repeat", "1", cmd=["false"])
    assert p.returncode == 1 and "run failed: pools=1 intra=1" in p.stderr
    p = sweep(tmp_path, "--repeat", "1", "--metric", "x: ([0-9]+)", cmd=["true"])
    assert p.returncode == 1 and "no match for --metric" in p.stderr
    for bad in (["--pools", "0"], ["--repeat", "x"], ["--metric", "no group"], ["--bogus"]):
        p = sweep(tmp_path, *bad, cmd=["true"])
        assert p.returncode == 2, (bad, p.stderr)
