"""parwidth's shape inference against onnx's own (onnx.shape_inference), on every ONNX
model family of the tests (tests/fixtures/models/*.onnx, written by
tests/fixtures/gen/gen_onnx.py; bench/paper runs the same files) and on torchvision
models that the test exports itself with torch.onnx.export at opsets 13 and 17
(tests/programs/torch_export.py, in .venv/torch): the FLOPs of the convolutions and
matmuls, per op type, from `parwidth width --json` (heavy_flops_by_type) and from the
shapes onnx infers, within 5%.

Both sides count alike: 2 x MACs (a Conv's weight [M, C/group, k...] times its output,
so groups count), plus one per output for a bias (Conv's third input, Gemm's C).

onnx's inference leaves a tensor's shape unknown where it depends on values that it
does not propagate: ShuffleNet v2's channel split is a Slice whose ends are computed
from Shape -> Gather -> Add -> Div -> Mul, and onnx's data propagation stops at the
Div, so the convolutions behind the splits get no shape (a comparison that skipped them
measured half of ShuffleNet's FLOPs: parwidth looked 2.0x too high); Swin's windows pad
by amounts computed with Mod, Concat, Reshape, a reversing Slice and Transpose. So the
reference folds every small computation whose inputs are known values with onnx's own
reference implementation of the operator (onnx.reference), Shape and Size from the
inferred shapes, feeds the values back as constants and infers again, until nothing
more is learned; a heavy op whose shape is still unknown then fails the test instead of
dropping out of the sum. A symbolic input dim (the exports' dynamic batch) is 1 on both
sides, as parwidth takes it.

Runs with .venv/ort/bin/python (scripts/test); skips where the onnx package is missing,
and the exported models where .venv/torch (torch, torchvision) is.
"""
import json
import math
import os
import subprocess
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx", reason="the onnx package is not installed in this environment")
np = pytest.importorskip("numpy")
from onnx import helper, numpy_helper, shape_inference  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("PW_BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
PARWIDTH = BUILD / "bin" / "parwidth"
MODELS = ROOT / "tests" / "fixtures" / "models"
FAMILIES = sorted(p.name for p in MODELS.glob("*.onnx"))
HEAVY = ("Conv", "Gemm", "MatMul")
TOLERANCE = 0.05
MAX_FOLD = 4096  # elements: shape computations are small; nothing bigger is folded
TORCH_PYTHON = ROOT / ".venv" / "torch" / "bin" / "python"
EXPORTER = ROOT / "tests" / "programs" / "torch_export.py"
EXPORTED = ("shufflenet_v2_x0_5", "resnet18", "mobilenet_v2", "mobilenet_v3_small",
            "squeezenet1_1", "googlenet", "swin_tiny", "vit_tiny")
OPSETS = (13, 17)


def dims_of(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    out = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            return None
        out.append(d.dim_value)
    return out


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def initializer_values(t):
    """An initializer's values when the file has them (the fixtures' weights are
    stripped) and it is small, else None."""
    if math.prod(t.dims) > MAX_FOLD:
        return None
    try:
        v = numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - dims without data
        return None
    return v if v.size == math.prod(t.dims) else None


def fold(node, vals, shapes, opset):
    """The values of node's outputs from its known inputs, or None."""
    op, ins = node.op_type, list(node.input)
    if op == "Shape":
        s = shapes.get(ins[0])
        if s is None:
            return None
        return [np.array(s[attr(node, "start", 0):attr(node, "end", len(s))], np.int64)]
    if op == "Size":
        s = shapes.get(ins[0])
        return None if s is None else [np.array(math.prod(s), np.int64)]
    if op in HEAVY or op.startswith("Random") or node.domain not in ("", "ai.onnx"):
        return None
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    if (not ins and op != "Constant") or any(i and i not in vals for i in ins):
        return None
    try:
        outs = ReferenceEvaluator(node, opsets={"": opset}).run(None, {i: vals[i] for i in ins if i})
    except Exception:  # noqa: BLE001 - an operator the reference cannot run alone
        return None
    return [np.asarray(o) for o in outs]


def reference(path):
    """Conv/Gemm/MatMul FLOPs per op type from onnx's inferred shapes; the names of the
    heavy ops whose shapes it could not infer (even after folding)."""
    model = onnx.load(str(path))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
    for inp in model.graph.input:  # a symbolic dim is 1, as parwidth takes it
        for d in inp.type.tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                d.dim_value = 1
    for _ in range(len(model.graph.node) + 1):
        g = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True).graph
        shapes = {vi.name: dims_of(vi) for vi in list(g.input) + list(g.value_info) + list(g.output)}
        vals = {}
        for t in g.initializer:
            shapes[t.name] = list(t.dims)
            v = initializer_values(t)
            if v is not None:
                vals[t.name] = v
        new, changed = [], False
        for node in model.graph.node:  # in topological order, as the exporter wrote them
            outs = fold(node, vals, shapes, opset)
            if outs is None or len(outs) != len(node.output) or any(o.size > MAX_FOLD for o in outs):
                new.append(node)
                continue
            for name, v in zip(node.output, outs):
                vals[name] = v
            if node.op_type == "Constant":
                new.append(node)
                continue
            # Values onnx did not know: written back as constants, then inferred again.
            new.extend(helper.make_node("Constant", [], [name],
                                        value=numpy_helper.from_array(v, name + "_folded"))
                       for name, v in zip(node.output, outs) if name)
            changed = True
        if not changed:
            break
        del model.graph.node[:]
        model.graph.node.extend(new)
    flops, unknown = {}, []
    for node in g.node:
        if node.op_type not in HEAVY:
            continue
        a, b, y = (shapes.get(node.input[0]), shapes.get(node.input[1]), shapes.get(node.output[0]))
        if a is None or b is None or y is None:
            unknown.append(node.name)
            continue
        ny = math.prod(y)
        bias = len(node.input) > 2 and node.input[2] != ""
        if node.op_type == "Conv":
            f = 2 * ny * math.prod(b[1:]) + (ny if bias else 0)
        elif node.op_type == "Gemm":
            f = 2 * ny * a[0 if attr(node, "transA", 0) else 1] + (ny if bias else 0)
        else:
            f = 2 * ny * a[-1]
        flops[node.op_type] = flops.get(node.op_type, 0) + f
    return flops, unknown


def parwidth_flops(path):
    p = subprocess.run([str(PARWIDTH), "width", str(path), "--json"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    w = json.loads(p.stdout)
    return {op: f for op, f in w["heavy_flops_by_type"].items() if op in HEAVY}, w


def check_agreement(path):
    if not PARWIDTH.exists():
        pytest.fail(f"{PARWIDTH} not found: build first (scripts/build) or set PW_BUILD")
    ref, unknown = reference(path)
    assert not unknown, f"onnx's shape inference (with folding) left these unknown: {unknown[:5]}"
    ours, w = parwidth_flops(path)
    assert w["costs"] == "flops", w
    assert set(ours) == set(ref), (ours, ref)
    for op in ref:
        ratio = ours[op] / ref[op]
        assert abs(ratio - 1) <= TOLERANCE, f"{path.name} {op}: parwidth {ours[op]:.4g} vs onnx {ref[op]:.4g}"
    total = sum(ours.values()) / sum(ref.values())
    assert abs(total - 1) <= TOLERANCE, (path.name, total)


@pytest.mark.parametrize("family", FAMILIES)
def test_heavy_flops_agree_with_onnx_shape_inference(family):
    check_agreement(MODELS / family)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The torchvision models of tests/programs/torch_export.py, exported once per opset
    by .venv/torch's torch.onnx.export."""
    if not TORCH_PYTHON.exists():
        pytest.skip(f"{TORCH_PYTHON} not found: no torch environment to export with (scripts/bootstrap)")
    probe = subprocess.run([str(TORCH_PYTHON), "-c", "import torch, torchvision"], capture_output=True,
                           text=True, timeout=300)
    if probe.returncode != 0:
        pytest.skip(f"torch or torchvision does not import in {TORCH_PYTHON}: {probe.stderr[-300:]}")
    out = tmp_path_factory.mktemp("exported")
    for opset in OPSETS:
        p = subprocess.run([str(TORCH_PYTHON), str(EXPORTER), str(out), str(opset), *EXPORTED],
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("model", EXPORTED)
def test_torch_exports_agree_with_onnx_shape_inference(exported, model, opset):
    # Exported as users export (dynamic batch): the graph computes its own shapes.
    path = exported / f"{model}_opset{opset}.onnx"
    assert onnx.load(str(path)).opset_import[0].version == opset
    check_agreement(path)


def test_every_family_is_checked():
    # The families that tests/fixtures/gen/gen_onnx.py writes: a new one is checked as it lands.
    assert len(FAMILIES) >= 11, FAMILIES
