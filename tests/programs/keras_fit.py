#!/usr/bin/env python3
"""tests/programs/keras_fit: a small Keras model with four parallel Dense
branches, trained with model.fit for a few steps on synthetic data (fixed
seed, no shuffling, no XLA), so that its training step's function graph is
wider than one pool. --json writes the per-step losses, the final weights'
checksum, TensorFlow's Python-side thread settings and each step's wall time
(step_seconds, for bench/frameworks/keras_fit.py).

    LD_PRELOAD=build/lib/libparwidth.so .venv/tf/bin/python tests/programs/keras_fit.py --json out.json
"""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

FEATURES, WIDTH, CLASSES, BRANCHES = 32, 64, 4, 4


def build():
    keras = tf.keras
    inp = keras.Input(shape=(FEATURES,))
    branches = [keras.layers.Dense(WIDTH, activation="relu", name=f"branch{i}")(inp)
                for i in range(BRANCHES)]
    out = keras.layers.Dense(CLASSES, name="head")(keras.layers.Concatenate()(branches))
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    return model


class Losses(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []
        self.step_seconds = []
        self.began = 0.0

    def on_train_batch_begin(self, batch, logs=None):
        self.began = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["loss"]))
        self.step_seconds.append(time.perf_counter() - self.began)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--json")
    a = ap.parse_args()
    tf.keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.steps * a.batch, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=(a.steps * a.batch,)).astype(np.int32)
    model = build()
    losses = Losses()
    model.fit(x, y, batch_size=a.batch, epochs=1, shuffle=False, verbose=0, callbacks=[losses])
    weights = np.concatenate([w.ravel() for w in model.get_weights()])
    result = {
        "losses": losses.losses,
        "step_seconds": losses.step_seconds,
        "checksum": float(weights.sum()),
        "abs_checksum": float(np.abs(weights).sum()),
        "tf.config.threading": {
            "inter_op_parallelism_threads": tf.config.threading.get_inter_op_parallelism_threads(),
            "intra_op_parallelism_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        },
    }
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
