#!/usr/bin/env python3
"""examples/infer_mixed: one inference process of a shared node (bench/colocated/mixed,
tests/integration/test_colocation.py).

Runs in the framework's own environment (.venv/torch, .venv/ort, .venv/tf):

  torch  torchvision SqueezeNet 1.0, eval, torch.no_grad
  ort    GoogLeNet (tests/fixtures/models/googlenet.onnx, weights filled with
         fixed random values), onnxruntime.InferenceSession as a program makes it
  tf     Keras MobileNetV2 (weights=None), called through a tf.function

Each builds its model as an ordinary program would, then steps in a loop until
--end (Unix seconds). Steps that start at or after --begin and end by --end
count: steps/s = those steps / (end - begin). --threads N sets the framework's
own thread counts the way a user does by hand (torch.set_num_threads(N);
ORT intra_op_num_threads = N; TF intra = N, inter = 1). The JSON also holds a
digest of the output for one fixed input, computed once before the loop and
once after it, so a run shows whether anything changed the results.

    python examples/infer_mixed.py --framework ort --begin T0 --end T1 --json out.json
"""
import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def digest(array):
    return hashlib.sha256(array.tobytes()).hexdigest()[:16]


def torch_model(threads, batch):
    import torch
    import torchvision

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = torchvision.models.squeezenet1_0(num_classes=1000).eval()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 3, 224, 224, generator=gen)

    def step():
        with torch.no_grad():
            return model(x).numpy()

    return step, {"intra": torch.get_num_threads()}


def ort_model(threads, batch, tmp):
    sys.path.insert(0, str(ROOT / "examples"))
    from infer_ort import fixture_session  # the fixture's weights, fixed random values

    sess, feed = fixture_session("googlenet", threads, batch, tmp)

    def step():
        return sess.run(None, feed)[0]

    used = sess.get_session_options()
    return step, {"intra": used.intra_op_num_threads}


def tf_model(threads, batch):
    import numpy as np
    import tensorflow as tf

    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    x = tf.constant(np.random.default_rng(1).standard_normal((batch, 224, 224, 3)),
                    dtype=tf.float32)
    fn = tf.function(lambda t: model(t, training=False))

    def step():
        return fn(x).numpy()

    return step, {"intra": tf.config.threading.get_intra_op_parallelism_threads(),
                  "inter": tf.config.threading.get_inter_op_parallelism_threads()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", required=True, choices=["torch", "ort", "tf"])
    ap.add_argument("--begin", type=float, required=True, help="window start (Unix seconds)")
    ap.add_argument("--end", type=float, required=True, help="window end (Unix seconds)")
    ap.add_argument("--threads", type=int, default=0, help="the framework's threads, by hand")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        if a.framework == "torch":
            step, settings = torch_model(a.threads, a.batch)
        elif a.framework == "ort":
            step, settings = ort_model(a.threads, a.batch, tmp)
        else:
            step, settings = tf_model(a.threads, a.batch)
        ready = time.time()
        before = digest(step())
        counted, late = 0, ready > a.begin
        while True:
            t0 = time.time()
            if t0 >= a.end:
                break
            step()
            t1 = time.time()
            if t0 >= a.begin and t1 <= a.end:
                counted += 1
        after = digest(step())
    out = {"framework": a.framework, "pid": os.getpid(), "settings": settings,
           "ready": ready, "late": late, "steps": counted,
           "steps_per_s": counted / max(a.end - a.begin, 1e-9), "digest_before": before,
           "digest_after": after, "affinity": sorted(os.sched_getaffinity(0))}
    Path(a.json).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
