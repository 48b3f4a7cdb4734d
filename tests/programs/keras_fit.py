#!/usr/bin/env python3
"""tests/programs/keras_fit: a small Keras model trained with model.fit for a few
steps on synthetic data (fixed seed, no shuffling, no XLA). The default model has
four parallel Dense branches, so that its training step's function graph is wider
than one pool; --model picks one of the other kinds users train (MODELS below:
Conv2D branches, residual blocks, LSTM and GRU layers, an embedding). --json writes
the per-step losses, the final weights' checksum, TensorFlow's Python-side thread
settings, each step's wall time (step_seconds, for bench/frameworks/keras_fit.py)
and forward_flops: what the model's Conv2D, Dense and Embedding layers compute for
one batch, counted from their weights' shapes (2 per multiply-add; a gather copies).

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
IMAGE, STEPS_IN, VOCAB, IDS = (16, 16, 3), 12, 100, 10


def dense(keras):
    inp = keras.Input(shape=(FEATURES,))
    branches = [keras.layers.Dense(WIDTH, activation="relu", name=f"branch{i}")(inp)
                for i in range(BRANCHES)]
    return inp, keras.layers.Dense(CLASSES, name="head")(keras.layers.Concatenate()(branches))


def branches(keras):
    """Three parallel Conv2D branches (1x1, 3x3, 5x5), concatenated, pooled, dense."""
    layers = keras.layers
    inp = keras.Input(shape=IMAGE)
    parts = [layers.Conv2D(8, k, padding="same", activation="relu")(inp) for k in (1, 3, 5)]
    x = layers.MaxPooling2D()(layers.Concatenate()(parts))
    return inp, layers.Dense(CLASSES)(layers.Flatten()(x))


def residual(keras):
    """A stem and two residual blocks (the second strided, with a 1x1 projection)."""
    layers = keras.layers
    inp = keras.Input(shape=IMAGE)
    x = layers.ReLU()(layers.BatchNormalization()(layers.Conv2D(8, 3, padding="same")(inp)))
    for filters, stride in ((8, 1), (16, 2)):
        y = layers.Conv2D(filters, 3, strides=stride, padding="same")(x)
        y = layers.BatchNormalization()(layers.Conv2D(filters, 3, padding="same")(
            layers.ReLU()(layers.BatchNormalization()(y))))
        short = x if stride == 1 else layers.Conv2D(filters, 1, strides=stride)(x)
        x = layers.ReLU()(layers.Add()([y, short]))
    return inp, layers.Dense(CLASSES)(layers.GlobalAveragePooling2D()(x))


def recurrent(keras):
    """An LSTM over the sequence, a GRU over its outputs, dense."""
    inp = keras.Input(shape=(STEPS_IN, 8))
    x = keras.layers.GRU(16)(keras.layers.LSTM(16, return_sequences=True)(inp))
    return inp, keras.layers.Dense(CLASSES)(x)


def embedding(keras):
    """Token ids through an embedding, averaged, two dense layers."""
    inp = keras.Input(shape=(IDS,), dtype="int32")
    x = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(VOCAB, 8)(inp))
    return inp, keras.layers.Dense(CLASSES)(keras.layers.Dense(16, activation="relu")(x))


MODELS = {"dense": dense, "branches": branches, "residual": residual, "recurrent": recurrent,
          "embedding": embedding}


def build(kind="dense"):
    keras = tf.keras
    inp, out = MODELS[kind](keras)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    return model


def data(kind, n, rng):
    """n synthetic samples for the model kind: inputs and class labels."""
    if kind == "embedding":
        x = rng.integers(0, VOCAB, size=(n, IDS)).astype(np.int32)
    else:
        shape = {"dense": (FEATURES,), "recurrent": (STEPS_IN, 8)}.get(kind, IMAGE)
        x = rng.standard_normal((n,) + shape).astype(np.float32)
    return x, rng.integers(0, CLASSES, size=(n,)).astype(np.int32)


def forward_flops(model, batch):
    """FLOPs of one batch through the Conv2D, Dense and Embedding layers, from their
    weights' shapes and outputs: 2 per multiply-add."""
    keras = tf.keras
    total = 0
    for layer in model.layers:
        out = getattr(layer, "output", None)
        if out is None:
            continue
        outputs = batch * int(np.prod(out.shape[1:]))
        if isinstance(layer, keras.layers.Conv2D):  # kernel: kh kw C_in C_out
            total += 2 * outputs * int(np.prod(layer.kernel.shape[:3]))
        elif isinstance(layer, keras.layers.Dense):
            total += 2 * outputs * int(layer.kernel.shape[0])
        elif isinstance(layer, keras.layers.Embedding):
            total += outputs
    return total


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
    ap.add_argument("--model", choices=sorted(MODELS), default="dense")
    ap.add_argument("--json")
    a = ap.parse_args()
    tf.keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x, y = data(a.model, a.steps * a.batch, rng)
    model = build(a.model)
    losses = Losses()
    model.fit(x, y, batch_size=a.batch, epochs=1, shuffle=False, verbose=0, callbacks=[losses])
    weights = np.concatenate([w.ravel() for w in model.get_weights()])
    result = {
        "losses": losses.losses,
        "step_seconds": losses.step_seconds,
        "checksum": float(weights.sum()),
        "abs_checksum": float(np.abs(weights).sum()),
        "forward_flops": forward_flops(model, a.batch),
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
