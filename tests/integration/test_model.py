"""PARWIDTH_MODEL inside a governed process: a readable graph sets the plan
(and appears in the report); an unreadable one costs exactly one warning and
the process runs with a plan without a graph.
"""
import pytest

from test_core import BIN, FULL, ROOT, WARNING, load, run

MODELS = ROOT / "tests" / "fixtures" / "models"
ENGINE = BIN / "naive_engine"


@pytest.mark.parametrize(
    "model,avg_width",
    [("googlenet.onnx", 2), ("densenet121.onnx", 1), ("tf_inception_block_savedmodel", 2)],
)
def test_model_graph_sets_the_plan(tmp_path, model, avg_width):
    # The width rule (PARWIDTH_PLAN=width); test_plans.py covers the model's choice.
    report = tmp_path / "r.json"
    p = run([ENGINE, "--workers", 1, "--iterations", 2], REPORT=report, MODEL=MODELS / model,
            PLAN="width")
    assert p.returncode == 0, p.stderr
    assert WARNING not in p.stderr
    r = load(report)
    assert r["graph"]["avg_width"] == avg_width
    pools = min(avg_width, r["graph"]["max_level_width"], len(FULL))
    assert r["plan"]["pools"] == pools
    assert r["plan"]["threads"] == len(FULL) // pools
    assert r["plan"]["source"] == "width"


@pytest.mark.parametrize(
    "bad", ["missing.onnx", "not_a_model.txt", "truncated.onnx", "directory"]
)
def test_unreadable_model_warns_once_and_plans_without_a_graph(tmp_path, bad):
    path = tmp_path / bad
    if bad == "not_a_model.txt":
        path.write_text("hello\n")
    elif bad == "truncated.onnx":
        path.write_bytes((MODELS / "googlenet.onnx").read_bytes()[:1000])
    elif bad == "directory":
        path.mkdir()
    report = tmp_path / "r.json"
    p = run([ENGINE, "--workers", 1, "--iterations", 2], REPORT=report, MODEL=path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(WARNING) == 1, p.stderr
    r = load(report)
    assert r["governed"] is True
    assert r["graph"] is None
    assert r["plan"]["pools"] == 1
    assert any("PARWIDTH_MODEL" in w for w in r["warnings"])
