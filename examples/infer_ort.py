"""ONNX Runtime inference on one of the fixture models, for tests and benchmarks.

The fixtures (tests/fixtures/models/*.onnx) carry shapes but no weights; they
are filled here with fixed random values (He-scaled, seed 0), so every run
computes the same function. The session is made the way an ordinary program
makes it: onnxruntime.InferenceSession(path or bytes, SessionOptions).

  python examples/infer_ort.py --model tests/fixtures/models/googlenet.onnx \\
      --steps 10 [--intra N] [--inter N] [--parallel] [--spin 0|1] [--bytes] --json out.json

The JSON: ORT's own view of the session's options (session.get_session_options()),
the process's threads in /proc before and after the session was made, the
sum of each step's output, and each step's time.
"""
import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper as nh
import onnxruntime as ort


def filled(path, out_path):
    m = onnx.load(path)
    rng = np.random.default_rng(0)
    for init in m.graph.initializer:
        shape = list(init.dims)
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else max(shape[0] if shape else 1, 1)
        a = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        init.CopyFrom(nh.from_array(a, init.name))
    onnx.save(m, out_path)
    return out_path


def fixture_session(name, threads, batch, tmp, spinning=None):
    """The fixture tests/fixtures/models/<name>.onnx, filled (in directory tmp), as a
    program makes its session (intra_op_num_threads = threads; 0: ORT's default;
    spinning False: allow_spinning off), and the feed of one seeded input of `batch`
    items: (session, feed)."""
    root = Path(__file__).resolve().parents[1]
    path = filled(str(root / "tests" / "fixtures" / "models" / (name + ".onnx")),
                  str(Path(tmp) / (name + ".onnx")))
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    if spinning is False:
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = [batch if not isinstance(d, int) else d for d in inp.shape]
    shape[0] = batch
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    return sess, {inp.name: x}


def spin_of(opts):
    try:
        return opts.get_session_config_entry("session.intra_op.allow_spinning")
    except Exception:
        return None  # not set: ORT's default (spinning on)


def tasks():
    return len(os.listdir("/proc/self/task"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--filled", help="where to write the filled model (default: a temp file)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--intra", type=int)
    ap.add_argument("--inter", type=int)
    ap.add_argument("--parallel", action="store_true")
    ap.add_argument("--spin", type=int, choices=[0, 1])
    ap.add_argument("--bytes", action="store_true", help="load the model from bytes")
    ap.add_argument("--json")
    args = ap.parse_args()

    tmp = None
    path = args.filled
    if not path or not os.path.exists(path):
        if not path:
            tmp = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False)
            path = tmp.name
            tmp.close()
        filled(args.model, path)
    so = ort.SessionOptions()
    if args.intra is not None:
        so.intra_op_num_threads = args.intra
    if args.inter is not None:
        so.inter_op_num_threads = args.inter
    if args.parallel:
        so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    if args.spin is not None:
        so.add_session_config_entry("session.intra_op.allow_spinning", str(args.spin))
    before = tasks()
    source = open(path, "rb").read() if args.bytes else path
    sess = ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])
    after = tasks()
    used = sess.get_session_options()
    inp = sess.get_inputs()[0]
    shape = [args.batch] + [d if isinstance(d, int) else 1 for d in inp.shape[1:]]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    sums, times = [], []
    for _ in range(args.steps + 1):  # the first run is a warm-up
        t = time.perf_counter()
        y = sess.run(None, {inp.name: x})[0]
        times.append(time.perf_counter() - t)
        sums.append(float(np.asarray(y, dtype=np.float64).sum()))
    view = {
        "pid": os.getpid(),
        "options": {
            "intra_op_num_threads": used.intra_op_num_threads,
            "inter_op_num_threads": used.inter_op_num_threads,
            "execution_mode": str(used.execution_mode).split(".")[-1],
            "allow_spinning": spin_of(used),
        },
        "program_options": {
            "intra_op_num_threads": so.intra_op_num_threads,
            "inter_op_num_threads": so.inter_op_num_threads,
            "execution_mode": str(so.execution_mode).split(".")[-1],
            "allow_spinning": spin_of(so),
        },
        "tasks_before": before,
        "tasks_after": after,
        "sums": sums[1:],
        "step_s": times[1:],
        "environ_pythonpath": os.environ.get("PYTHONPATH"),
    }
    if tmp:
        os.unlink(path)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(view, f)
    else:
        print(json.dumps(view))


if __name__ == "__main__":
    main()
