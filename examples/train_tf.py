#!/usr/bin/env python3
"""examples/train_tf: a small Inception-style CNN (or, with --model widedeep,
a wide-and-deep model with embedding lookups) trained on synthetic data.

Graph mode (tf.compat.v1.Session) by default, a tf.function with --eager.
Same seed -> same initial weights and data, in both modes. Prints the median
step time, the thread settings as TensorFlow's Python side sees them, and a
checksum of the outputs; --json writes that and every thread of the process
(tid, name, Cpus_allowed_list) while the process is alive.

    LD_PRELOAD=build/lib/libparwidth.so .venv/tf/bin/python examples/train_tf.py
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

IMAGE = 32
CLASSES = 10


def make_weights(rng, stem=16, blocks=2):
    """Initial weights as numpy arrays, so graph and eager runs start equal."""
    def conv(kh, kw, cin, cout):
        return (rng.standard_normal((kh, kw, cin, cout)) * np.sqrt(2.0 / (kh * kw * cin))).astype(
            np.float32)

    w = {"stem": conv(3, 3, 3, stem)}
    cin = stem
    for b in range(blocks):
        # Four parallel branches: 1x1 | 1x1->3x3 | 1x1->3x3->3x3 | maxpool->1x1.
        w[f"b{b}_1x1"] = conv(1, 1, cin, 8)
        w[f"b{b}_3x3r"] = conv(1, 1, cin, 8)
        w[f"b{b}_3x3"] = conv(3, 3, 8, 12)
        w[f"b{b}_5x5r"] = conv(1, 1, cin, 4)
        w[f"b{b}_5x5a"] = conv(3, 3, 4, 6)
        w[f"b{b}_5x5b"] = conv(3, 3, 6, 6)
        w[f"b{b}_pool"] = conv(1, 1, cin, 6)
        cin = 8 + 12 + 6 + 6
    w["fc"] = (rng.standard_normal((cin, CLASSES)) * np.sqrt(1.0 / cin)).astype(np.float32)
    return w


def forward(v, x, blocks=2):
    def conv(t, name, stride=1):
        return tf.nn.relu(tf.nn.conv2d(t, v[name], stride, "SAME"))

    t = conv(x, "stem")
    for b in range(blocks):
        a = conv(t, f"b{b}_1x1")
        c = conv(conv(t, f"b{b}_3x3r"), f"b{b}_3x3")
        d = conv(conv(conv(t, f"b{b}_5x5r"), f"b{b}_5x5a"), f"b{b}_5x5b")
        p = conv(tf.nn.max_pool2d(t, 3, 1, "SAME"), f"b{b}_pool")
        t = tf.concat([a, c, d, p], axis=3)
        if b == 0:
            t = tf.nn.max_pool2d(t, 2, 2, "SAME")
    t = tf.reduce_mean(t, axis=[1, 2])
    return tf.matmul(t, v["fc"])


# Wide-and-deep: TABLES embedding tables looked up with IDS ids each (mean
# pooled), each through a small tower, concatenated with dense features into an
# MLP (the deep part), plus a linear model of the dense features (the wide
# part). The lookups and the towers are independent branches: a graph wider
# than the CNN's.
TABLES, VOCAB, EMB, IDS, DENSE = 6, 20000, 32, 8, 16


def make_widedeep_weights(rng):
    def dense(cin, cout):
        return (rng.standard_normal((cin, cout)) * np.sqrt(2.0 / cin)).astype(np.float32)

    w = {f"emb{t}": (rng.standard_normal((VOCAB, EMB)) * 0.05).astype(np.float32)
         for t in range(TABLES)}
    for t in range(TABLES):
        w[f"tower{t}"] = dense(EMB, 64)  # one small tower per table
    w["deep1"] = dense(64 * TABLES + DENSE, 256)
    w["deep2"] = dense(256, 128)
    w["deep_out"] = dense(128, CLASSES)
    w["wide"] = dense(DENSE, CLASSES)
    return w


def forward_widedeep(v, inputs):
    dense_x, ids = inputs
    towers = []
    for t in range(TABLES):
        e = tf.reduce_mean(tf.gather(v[f"emb{t}"], ids[:, t, :]), axis=1)
        towers.append(tf.nn.relu(tf.matmul(e, v[f"tower{t}"])))
    h = tf.concat(towers + [dense_x], axis=1)
    h = tf.nn.relu(tf.matmul(h, v["deep1"]))
    h = tf.nn.relu(tf.matmul(h, v["deep2"]))
    return tf.matmul(h, v["deep_out"]) + tf.matmul(dense_x, v["wide"])


def loss_of(logits, labels):
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def proc_threads():
    out = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
            cpus = ""
            with open(f"/proc/self/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        cpus = line.split(":", 1)[1].strip()
            out.append({"tid": int(tid), "name": name, "cpus": cpus})
        except OSError:
            pass  # the thread ended meanwhile
    return out


def model_forward(args):
    return forward_widedeep if args.model == "widedeep" else forward


def feed(x, batch):
    """Placeholder(s) -> values, for either model's inputs."""
    return dict(zip(x, batch)) if isinstance(x, tuple) else {x: batch}


def as_tensors(batch):
    return tuple(tf.constant(b) for b in batch) if isinstance(batch, tuple) else tf.constant(batch)


def sgd(var, grad, lr):
    """var -= lr * grad; embedding gradients are sparse (IndexedSlices)."""
    if isinstance(grad, tf.IndexedSlices):
        return var.scatter_sub(tf.IndexedSlices(lr * grad.values, grad.indices))
    return var.assign_sub(lr * grad)


def run_graph(args, w, xs, ys, lr):
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    with g.as_default():
        if args.model == "widedeep":
            xd = tf.compat.v1.placeholder(tf.float32, [args.batch, DENSE], name="dense")
            xi = tf.compat.v1.placeholder(tf.int32, [args.batch, TABLES, IDS], name="ids")
            x = (xd, xi)
        else:
            x = tf.compat.v1.placeholder(tf.float32, [args.batch, IMAGE, IMAGE, 3], name="x")
        y = tf.compat.v1.placeholder(tf.int32, [args.batch], name="y")
        v = {k: tf.Variable(a, name=k) for k, a in w.items()}
        logits = model_forward(args)(v, x)
        loss = loss_of(logits, y)
        names = sorted(v)
        grads = tf.gradients(loss, [v[k] for k in names])
        train = tf.group(*[sgd(v[k], gr, lr) for k, gr in zip(names, grads)])
        init = tf.compat.v1.global_variables_initializer()
    if args.save_graph:
        # The executed graph, for PARWIDTH_MODEL (e.g. to plan an --eager run).
        with open(args.save_graph, "wb") as f:
            f.write(g.as_graph_def().SerializeToString())
    config = tf.compat.v1.ConfigProto()
    if args.inter is not None:
        config.inter_op_parallelism_threads = args.inter
    if args.intra is not None:
        config.intra_op_parallelism_threads = args.intra
    with tf.compat.v1.Session(graph=g, config=config) as sess:
        sess.run(init)
        losses, times = [], []
        for i in range(args.steps):
            t0 = time.perf_counter()
            lv, _ = sess.run([loss, train], {**feed(x, xs[i % len(xs)]), y: ys[i % len(ys)]})
            times.append(time.perf_counter() - t0)
            losses.append(float(lv))
        out = sess.run(logits, feed(x, xs[0]))
        view = {"mode": "graph",
                "session_config": {"inter_op_parallelism_threads": config.inter_op_parallelism_threads,
                                   "intra_op_parallelism_threads": config.intra_op_parallelism_threads}}
        threads = proc_threads()
    return losses, out, times, view, threads


def run_eager(args, w, xs, ys, lr):
    if args.inter is not None:
        tf.config.threading.set_inter_op_parallelism_threads(args.inter)
    if args.intra is not None:
        tf.config.threading.set_intra_op_parallelism_threads(args.intra)
    v = {k: tf.Variable(a, name=k) for k, a in w.items()}
    names = sorted(v)

    fwd = model_forward(args)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_of(fwd(v, x), y)
        grads = tape.gradient(loss, [v[k] for k in names])
        for k, gr in zip(names, grads):
            sgd(v[k], gr, lr)
        return loss

    @tf.function
    def infer(x):
        return fwd(v, x)

    losses, times = [], []
    for i in range(args.steps):
        t0 = time.perf_counter()
        lv = step(as_tensors(xs[i % len(xs)]), tf.constant(ys[i % len(ys)]))
        lv = float(lv.numpy())
        times.append(time.perf_counter() - t0)
        losses.append(lv)
    out = infer(as_tensors(xs[0])).numpy()
    view = {"mode": "eager",
            "tf.config.threading": {
                "inter_op_parallelism_threads": tf.config.threading.get_inter_op_parallelism_threads(),
                "intra_op_parallelism_threads": tf.config.threading.get_intra_op_parallelism_threads()}}
    return losses, out, times, view, proc_threads()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["inception", "widedeep"], default="inception")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--inter", type=int, default=None, help="explicit inter-op threads")
    ap.add_argument("--intra", type=int, default=None, help="explicit intra-op threads")
    ap.add_argument("--eager", action="store_true", help="tf.function instead of a Session")
    ap.add_argument("--save-graph", default=None, help="graph mode: write the GraphDef here")
    ap.add_argument("--json", default=None, help="write the results and /proc threads here")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    if args.model == "widedeep":
        w = make_widedeep_weights(rng)
        xs = [(rng.standard_normal((args.batch, DENSE)).astype(np.float32),
               rng.integers(0, VOCAB, (args.batch, TABLES, IDS)).astype(np.int32))
              for _ in range(4)]
    else:
        w = make_weights(rng)
        xs = [rng.standard_normal((args.batch, IMAGE, IMAGE, 3)).astype(np.float32)
              for _ in range(4)]
    ys = [rng.integers(0, CLASSES, args.batch).astype(np.int32) for _ in range(4)]
    run = run_eager if args.eager else run_graph
    losses, out, times, view, threads = run(args, w, xs, ys, 0.05)

    # Skip the first step (graph optimisation, kernel selection) when there are more.
    steady = times[1:] if len(times) > 1 else times
    result = {
        "mode": view["mode"],
        "model": args.model,
        "steps": args.steps,
        "batch": args.batch,
        "seed": args.seed,
        "median_step_s": statistics.median(steady),
        "step_times_s": times,
        "losses": losses,
        "checksum": float(np.sum(out, dtype=np.float64)),
        "abs_checksum": float(np.sum(np.abs(out), dtype=np.float64)),
        "framework": view,
        "env": {k: os.environ[k] for k in ("TF_NUM_INTEROP_THREADS", "TF_NUM_INTRAOP_THREADS")
                if k in os.environ},
        "threads": threads,
    }
    print(f"model {args.model}  mode {result['mode']}  steps {args.steps}  batch {args.batch}  seed {args.seed}")
    print(f"median step {result['median_step_s'] * 1000:.1f} ms")
    for k, val in view.items():
        if k != "mode":
            print(f"{k}: {val}")
    names = {}
    for t in threads:
        names[t["name"]] = names.get(t["name"], 0) + 1
    print(f"threads: {len(threads)} {names}")
    print(f"final loss {losses[-1]:.6f}  checksum {result['checksum']:.6f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
