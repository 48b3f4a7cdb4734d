#!/usr/bin/env python3
"""Graph generator for examples/engine: the project's JSON edge list with the engine's
extensions (inputs with shapes, op attributes, constant tensors; examples/engine/README.md),
plus every node's output shape and each heavy node's FLOPs so `parwidth width` uses FLOP
costs.

    gen_graphs.py chain --convs 12 -o chain.json
    gen_graphs.py inception --modules 3 --branches 4 --depths 1,2,2,1 --channels 32,48,48,32 -o m.json
    gen_graphs.py wide-deep --tables 4 --rows 20000 --dim 32 --fields 8 -o wd.json
    gen_graphs.py towers --lengths 12,6,6 -o falsify.json   # the reviewers' case: W = 2
    gen_graphs.py --suite DIR                                # the bench's standard set

Standard library only; any python3 runs it.
"""
import argparse
import json
import os
import sys


class Builder:
    def __init__(self, name, batch):
        self.g = {"name": name, "framework": "onnx", "inputs": [], "tensors": [],
                  "constants": [], "nodes": []}
        self.batch = batch
        self.shapes = {}
        self.count = {}

    def uid(self, base):
        self.count[base] = self.count.get(base, 0) + 1
        return "%s%d" % (base, self.count[base])

    def input(self, name, shape, dtype=None):
        d = {"name": name, "shape": shape}
        if dtype:
            d["dtype"] = dtype
        self.g["inputs"].append(d)
        self.shapes[name] = shape
        return name

    def node(self, op, inputs, shape, attrs=None, flops=None, name=None):
        name = name or self.uid(op.lower() + "_")
        n = {"name": name, "op": op, "inputs": list(inputs), "shape": shape}
        if attrs:
            n["attrs"] = attrs
        if flops is not None:
            n["flops"] = float(flops)
        self.g["nodes"].append(n)
        self.shapes[name] = shape
        return name

    def conv(self, x, channels, k=3, stride=1, relu=True):
        n, c, h, w = self.shapes[x]
        pad = k // 2
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        y = [n, channels, oh, ow]
        out = self.node("Conv", [x], y, {"channels": channels, "kernel": k, "stride": stride,
                                         "pad": pad}, flops=2 * n * channels * oh * ow * c * k * k)
        return self.node("Relu", [out], y) if relu else out

    def maxpool(self, x, k=3, stride=2, pad=1):
        n, c, h, w = self.shapes[x]
        y = [n, c, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1]
        return self.node("MaxPool", [x], y, {"kernel": k, "stride": stride, "pad": pad})

    def concat(self, xs, axis=1):
        y = list(self.shapes[xs[0]])
        y[axis] = sum(self.shapes[x][axis] for x in xs)
        return self.node("Concat", xs, y, {"axis": axis})

    def add(self, a, b):
        return self.node("Add", [a, b], list(self.shapes[a]))

    def gap_flatten(self, x):
        n, c, _, _ = self.shapes[x]
        g = self.node("GlobalAveragePool", [x], [n, c, 1, 1])
        return self.node("Flatten", [g], [n, c], {"axis": 1})

    def dense(self, x, units, relu=True):
        m, k = self.shapes[x]
        out = self.node("MatMul", [x], [m, units], {"units": units}, flops=2 * m * k * units)
        return self.node("Relu", [out], [m, units]) if relu else out

    def gather(self, table, ids):
        rows, dim = table[1]
        if table[0] not in self.g["constants"]:
            self.g["tensors"].append({"name": table[0], "shape": [rows, dim]})
            self.g["constants"].append(table[0])
        n, f = self.shapes[ids]
        return self.node("Gather", [table[0], ids], [n, f, dim], {"axis": 0}, flops=n * f * dim)

    def flatten(self, x):
        s = self.shapes[x]
        k = 1
        for v in s[1:]:
            k *= v
        return self.node("Flatten", [x], [s[0], k], {"axis": 1})

    def done(self):
        return self.g


def chain(convs=12, channels=48, size=32, batch=1):
    b = Builder("chain-%d" % convs, batch)
    x = b.conv(b.input("x", [batch, 3, size, size]), channels)
    for _ in range(convs - 1):
        x = b.conv(x, channels)
    b.dense(b.gap_flatten(x), 10, relu=False)
    return b.done()


def inception(modules=3, depths=(1, 2, 2, 1), channels=(32, 48, 48, 32), size=32, batch=1,
              stem=32, name=None):
    b = Builder(name or "inception-%dx%d" % (modules, len(depths)), batch)
    x = b.conv(b.input("x", [batch, 3, size, size]), stem)
    for m in range(modules):
        outs = []
        for depth, ch in zip(depths, channels):
            y = x
            for d in range(depth):
                y = b.conv(y, ch, k=1 if d == 0 else 3)
            outs.append(y)
        x = b.concat(outs)
        if m % 2 == 1 and m != modules - 1:
            x = b.maxpool(x)
    b.dense(b.gap_flatten(x), 10, relu=False)
    return b.done()


def towers(lengths=(12, 6, 6), channels=48, size=32, batch=1, name=None):
    """Independent conv branches from one input, joined by a light head. With lengths
    (2n, n, n): H = 4n, L = 2n, so W = floor(H / L) = 2 although three branches run
    side by side for the first half (max level width 3): the reviewers' case."""
    b = Builder(name or "towers-" + "-".join(map(str, lengths)), batch)
    x = b.input("x", [batch, 16, size, size])
    outs = []
    for n in lengths:
        y = x
        for _ in range(n):
            y = b.conv(y, channels)
        outs.append(y)
    # A light head (no classifier): a heavy one would add a layer and make W = 1.
    b.gap_flatten(b.concat(outs))
    return b.done()


def wide_deep(tables=4, rows=20000, dim=32, fields=8, dense_in=64, hidden=(512, 256, 128),
              batch=64):
    """Embedding lookups (Gather on constant tables) feeding a deep MLP, beside a wide
    linear part on the same features; the two are added."""
    b = Builder("wide-deep-%d" % tables, batch)
    embs = []
    for t in range(tables):
        ids = b.input("ids%d" % t, [batch, fields], dtype="int64")
        embs.append(b.flatten(b.gather(("table%d" % t, (rows, dim)), ids)))
    dense = b.input("dense", [batch, dense_in])
    feats = b.concat(embs + [dense])
    deep = feats
    for h in hidden:
        deep = b.dense(deep, h)
    deep = b.dense(deep, 1, relu=False)
    wide = b.dense(feats, 1, relu=False)
    b.add(deep, wide)
    return b.done()


def suite():
    """The bench's generated graphs (bench/paper)."""
    return {
        "chain12": chain(12, 48, 32),
        "inception2x3": inception(3, (2, 2), (48, 48), 32, name="inception-2-branches"),
        "inception4x4": inception(4, (1, 2, 2, 1), (32, 48, 48, 32), 32, name="inception-4-branches"),
        "towers2": towers((10, 10), 48, 32, name="two-towers"),
        "falsify3": towers((12, 6, 6), 48, 32, name="falsification-3-branches-W2"),
        "wide_deep4": wide_deep(4),
    }


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("kind", nargs="?", choices=["chain", "inception", "towers", "wide-deep"])
    p.add_argument("-o", "--out", help="output file (default stdout)")
    p.add_argument("--suite", metavar="DIR", help="write the bench's standard set into DIR")
    p.add_argument("--batch", type=int)
    p.add_argument("--size", type=int, default=32, help="image height/width")
    p.add_argument("--convs", type=int, default=12)
    p.add_argument("--channels", default="48", help="channels (a list for inception)")
    p.add_argument("--modules", type=int, default=3)
    p.add_argument("--depths", default="1,2,2,1")
    p.add_argument("--lengths", default="12,6,6")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--fields", type=int, default=8)
    a = p.parse_args(argv)
    ints = lambda s: tuple(int(v) for v in s.split(","))
    if a.suite:
        os.makedirs(a.suite, exist_ok=True)
        for name, g in suite().items():
            with open(os.path.join(a.suite, name + ".json"), "w") as f:
                json.dump(g, f, indent=1)
        return 0
    if not a.kind:
        p.error("a kind or --suite is required")
    ch = ints(a.channels)
    if a.kind == "chain":
        g = chain(a.convs, ch[0], a.size, a.batch or 1)
    elif a.kind == "inception":
        depths = ints(a.depths)
        chans = ch if len(ch) == len(depths) else ch[:1] * len(depths)
        g = inception(a.modules, depths, chans, a.size, a.batch or 1)
    elif a.kind == "towers":
        g = towers(ints(a.lengths), ch[0], a.size, a.batch or 1)
    else:
        g = wide_deep(a.tables, a.rows, a.dim, a.fields, batch=a.batch or 64)
    text = json.dumps(g, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
