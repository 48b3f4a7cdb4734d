"""The parwidth command: width, plan and topo as a user runs them."""
import json
import subprocess

import pytest

from test_core import BIN, FULL, ROOT

PARWIDTH = BIN / "parwidth"
MODELS = ROOT / "tests" / "fixtures" / "models"


def cli(*args):
    return subprocess.run([str(PARWIDTH), *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def test_width_json_has_the_documented_keys():
    p = cli("width", MODELS / "densenet121.onnx", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for k in ("heavy", "layers", "avg_width", "max_level_width", "weighted_parallelism",
              "heavy_by_type"):
        assert k in d
    assert d["avg_width"] == 1  # the paper's table
    assert sum(d["heavy_by_type"].values()) == d["heavy"]


def test_width_reports_flops_work_and_span_from_inferred_shapes():
    p = cli("width", MODELS / "googlenet.onnx", "--json")
    assert p.returncode == 0, p.stderr
    one = json.loads(p.stdout)
    assert one["costs"] == "flops"
    assert 0 < one["span_flops"] < one["work_flops"]
    assert one["work_over_span"] == pytest.approx(one["work_flops"] / one["span_flops"], 1e-3)
    # A batch of 4 given on the command line: four times the work.
    p = cli("width", MODELS / "googlenet.onnx", "--json", "--input-shape", "input=4x3x224x224")
    assert p.returncode == 0, p.stderr
    four = json.loads(p.stdout)
    assert four["work_flops"] == pytest.approx(4 * one["work_flops"], 1e-3)
    # A name the model lacks: one warning that lists the real inputs; the output is unchanged.
    p = cli("width", MODELS / "googlenet.onnx", "--json", "--input-shape", "x=4x3x224x224")
    assert p.returncode == 0
    assert json.loads(p.stdout)["work_flops"] == one["work_flops"]
    assert p.stderr.count("parwidth: warning: ") == 1 and "inputs: input" in p.stderr
    p = cli("width", MODELS / "googlenet.onnx", "--input-shape", "input=4xbig")
    assert p.returncode == 2 and p.stderr.startswith("parwidth width: error: --input-shape: ")
    assert p.stderr.count("\n") == 1


def test_width_table_shows_work_and_span():
    p = cli("width", MODELS / "tf_inception_block.pb")
    assert p.returncode == 0, p.stderr
    assert "work " in p.stdout and "span " in p.stdout and "work / span" in p.stdout


@pytest.mark.parametrize("bad", ["/nonexistent.onnx", "/dev/null", "/tmp"])
def test_width_unreadable_input_is_one_line_and_exit_2(bad):
    p = cli("width", bad)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.startswith("parwidth: error: ") and p.stderr.count("\n") == 1


def test_plan_for_a_described_machine():
    p = cli("plan", "--model", MODELS / "googlenet.onnx", "--topology",
            "synthetic:package:2 core:24 pu:2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["graph"]["avg_width"] == 2
    assert d["graph"]["costs"] == "flops" and d["graph"]["work_flops"] > 0
    assert d["plan"]["pools"] == 2 and d["plan"]["threads"] == 24
    # One pool per socket: the primary PUs (even ids) of 24 cores each.
    assert d["plan"]["core_sets"] == [list(range(0, 48, 2)), list(range(48, 96, 2))]
    assert d["plan"]["spanning_pools"] == 0


def test_plan_here_uses_this_process_budget():
    d = json.loads(cli("plan", "--json").stdout)
    assert d["budget"]["cpus"] == sorted(FULL)
    assert d["plan"]["pools"] == 1 and d["plan"]["threads"] == d["budget"]["cores"]


def test_topo_json_and_cpus_restriction():
    d = json.loads(cli("topo", "--json", "--cpus", str(min(FULL))).stdout)
    assert d["budget"]["cpus"] == [min(FULL)]
    assert any(n.startswith("PARWIDTH_CPUS") for n in d["budget"]["notes"])


@pytest.mark.parametrize("args", [["plan", "--pools", "zero"], ["plan", "--bogus"], ["nope"], []])
def test_usage_errors_exit_2(args):
    assert cli(*args).returncode == 2


COMMANDS = ["run", "plan", "topo", "width", "sweep", "tune", "calibrate", "node", "plans"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_exits_0(cmd):
    for flag in ("--help", "-h"):
        p = cli(cmd, flag)
        assert p.returncode == 0 and p.stdout.startswith("usage: parwidth " + cmd), p.stdout
        assert p.stderr == ""


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_command_words_option_errors_alike(cmd):
    """One option table per command, one scanner: an unknown option, a value given to a
    flag and a missing value are each one line "parwidth CMD: error: ..." and exit 2."""
    p = cli(cmd, "--no-such-option")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (f"parwidth {cmd}: error: unknown option '--no-such-option' "
                        f"(see parwidth {cmd} --help)\n")
    valued = {"run": "--lib", "plan": "--cpus", "topo": "--cpus", "width": "--input-shape",
              "sweep": "--repeat", "tune": "--repeat", "node": "--watch", "plans": "--forget"}
    if cmd in valued:
        p = cli(cmd, valued[cmd])
        assert p.returncode == 2
        assert p.stderr.startswith(f"parwidth {cmd}: error: {valued[cmd]} wants ")
        assert p.stderr.count("\n") == 1
    flag = {"plan": "--json", "topo": "--json", "width": "--json", "sweep": "--json",
            "tune": "--json", "calibrate": "--show", "node": "--json", "plans": "--json",
            "run": "--no-calibrate"}[cmd]
    p = cli(cmd, flag + "=1")
    assert p.returncode == 2 and p.stderr.startswith(f"parwidth {cmd}: error: {flag} takes no value")


@pytest.mark.parametrize("args,want", [
    (["sweep", "--pools=1,x", "--", "true"], "--pools wants a list like 1,2,4 or 1-4, got '1,x'"),
    (["sweep", "--intra", "4-2", "--", "true"], "--intra wants a list like 1,2,4 or 1-4, got '4-2'"),
    (["tune", "--budget-s=-1", "--", "true"], "--budget-s wants seconds > 0, got '-1'"),
    (["node", "--watch", "0"], "--watch wants an integer 1..3600, got '0'"),
    (["plan", "--pools", "4097"], "--pools wants an integer 1..4096, got '4097'"),
])
def test_option_values_are_checked_where_they_are_read(args, want):
    p = cli(*args)
    assert p.returncode == 2 and p.stderr.startswith(f"parwidth {args[0]}: error: {want}"), p.stderr


def test_both_value_spellings_mean_the_same():
    spaced = cli("plan", "--json", "--topology", "synthetic:package:1 core:3 pu:1", "--pools", "3")
    joined = cli("plan", "--json", "--topology=synthetic:package:1 core:3 pu:1", "--pools=3")
    assert spaced.returncode == 0 and joined.returncode == 0, (spaced.stderr, joined.stderr)
    assert json.loads(spaced.stdout)["plan"] == json.loads(joined.stdout)["plan"]
    assert json.loads(joined.stdout)["plan"]["pools"] == 3
