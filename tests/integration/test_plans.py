"""Plans from operator costs: what `parwidth plan` and a governed process's report say
about the plan's source, with an empty cache, a calibration, and a bad calibration."""
import json
import os
import subprocess
import sys

import pytest

from test_core import BIN, LIB, clean_env

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
