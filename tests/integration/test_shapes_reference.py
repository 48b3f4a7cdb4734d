"""parwidth's shape inference against onnx's own (onnx.shape_inference), on every ONNX
model family of the tests (tests/fixtures/models/*.onnx, written by
tests/fixtures/gen/gen_onnx.py; bench/paper runs the same files): the FLOPs of the
convolutions and matmuls, per op type, from `parwidth width --json`
(heavy_flops_by_type) and from the shapes onnx infers, within 5%.

Both sides count alike: 2 x MACs (a Conv's weight [M, C/group, k...] times its output,
so groups count), plus one per output for a bias (Conv's third input, Gemm's C).

onnx's inference leaves a tensor's shape unknown where it depends on values that it
does not propagate: ShuffleNet v2's channel split is a Slice whose ends are computed
from Shape -> Gather -> Add -> Div -> Mul, and onnx's data propagation stops at the
Div, so the 39 convolutions behind the splits get no shape. A comparison that skipped
them measured half of ShuffleNet's FLOPs (parwidth looked 2.0x too high). So the
reference folds such small integer shape computations itself (numpy, below), feeds the
values back as constants and infers again, until nothing more is learned; a heavy op
whose shape is still unknown then fails the test instead of dropping out of the sum.

Runs with .venv/ort/bin/python (scripts/test); skips where the onnx package is missing.
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


def fold(node, vals, shapes):
    """The integer value of node's first output from known inputs, or None."""
    op, ins = node.op_type, list(node.input)
    if op == "Constant":
        t = attr(node, "value")
        if t is not None and t.data_type in (6, 7):  # int32, int64
            return numpy_helper.to_array(t).astype(np.int64)
        ints = attr(node, "value_ints")
        return np.array(ints, np.int64) if ints is not None else None
    if op == "Shape":
        s = shapes.get(ins[0])
        if s is None:
            return None
        return np.array(s[attr(node, "start", 0):attr(node, "end", len(s))], np.int64)
    x = [vals.get(i) if i else None for i in ins]
    if any(v is None for v, i in zip(x, ins) if i):
        return None
    if op == "Gather":
        return np.take(x[0], x[1], axis=attr(node, "axis", 0))
    if op in ("Add", "Sub", "Mul"):
        return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](x[0], x[1])
    if op == "Div":  # ONNX integer Div truncates
        if np.any(x[1] == 0):
            return None
        return np.trunc(x[0] / x[1]).astype(np.int64)
    if op == "Concat":
        return np.concatenate(x, axis=attr(node, "axis", 0))
    if op == "Unsqueeze":
        axes = attr(node, "axes", None)
        axes = list(x[1]) if axes is None else axes
        return np.expand_dims(x[0], tuple(int(a) for a in axes))
    if op == "Squeeze":
        axes = attr(node, "axes", None)
        axes = list(x[1]) if axes is None and len(x) > 1 else axes
        return np.squeeze(x[0], tuple(int(a) for a in axes) if axes is not None else None)
    if op == "Cast":
        return x[0] if attr(node, "to") in (6, 7) else None
    if op == "Slice" and x[0].ndim == 1:
        steps = x[4] if len(x) > 4 and x[4] is not None else [1]
        return x[0][int(x[1][0]):int(x[2][0]):int(steps[0])]
    return None


def reference(path):
    """Conv/Gemm/MatMul FLOPs per op type from onnx's inferred shapes; the names of the
    heavy ops whose shapes it could not infer (even after folding)."""
    model = onnx.load(str(path))
    for _ in range(16):
        inferred = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
        g = inferred.graph
        shapes = {vi.name: dims_of(vi) for vi in list(g.input) + list(g.value_info) + list(g.output)}
        for t in g.initializer:
            shapes[t.name] = list(t.dims)
        vals = {t.name: numpy_helper.to_array(t).astype(np.int64)
                for t in g.initializer if t.data_type in (6, 7) and (t.raw_data or t.int64_data or t.int32_data)}
        for node in g.node:  # in topological order, as the exporter wrote them
            v = fold(node, vals, shapes)
            if v is not None and node.output and v.size <= MAX_FOLD:
                vals[node.output[0]] = np.asarray(v, np.int64)
        # Values onnx did not know: written back as Constant nodes, then inferred again.
        new = []
        changed = False
        for node in model.graph.node:
            out = node.output[0] if node.output else ""
            if (node.op_type not in ("Constant",) and len(node.output) == 1 and out in vals
                    and node.op_type in ("Shape", "Gather", "Add", "Sub", "Mul", "Div", "Concat",
                                         "Unsqueeze", "Squeeze", "Cast", "Slice")):
                new.append(helper.make_node("Constant", [], [out],
                                            value=numpy_helper.from_array(vals[out], out + "_folded")))
                changed = True
            else:
                new.append(node)
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


@pytest.mark.parametrize("family", FAMILIES)
def test_heavy_flops_agree_with_onnx_shape_inference(family):
    if not PARWIDTH.exists():
        pytest.fail(f"{PARWIDTH} not found: build first (scripts/build) or set PW_BUILD")
    ref, unknown = reference(MODELS / family)
    assert not unknown, f"onnx's shape inference (with folding) left these unknown: {unknown[:5]}"
    ours, w = parwidth_flops(MODELS / family)
    assert w["costs"] == "flops", w
    assert set(ours) == set(ref), (ours, ref)
    for op in ref:
        ratio = ours[op] / ref[op]
        assert abs(ratio - 1) <= TOLERANCE, f"{family} {op}: parwidth {ours[op]:.4g} vs onnx {ref[op]:.4g}"
    total = sum(ours.values()) / sum(ref.values())
    assert abs(total - 1) <= TOLERANCE, (family, total)


def test_every_family_is_checked():
    # The families that tests/fixtures/gen/gen_onnx.py writes: a new one is checked as it lands.
    assert len(FAMILIES) >= 11, FAMILIES
