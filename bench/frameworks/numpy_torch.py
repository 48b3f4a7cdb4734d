#!/usr/bin/env python3
"""bench/frameworks/numpy_torch: numpy's BLAS pool beside torch's pools.

One program does, per step, a torchvision SqueezeNet inference (torch's
OpenMP team, intra-op pool) and a numpy matrix product (numpy's OpenBLAS
pool); run bare and under parwidth, configurations alternating. Printed per
configuration: step time median [min, max] over --runs runs, and the threads
that worked during the steps (/proc/self/task CPU time grew) out of those alive.

    .venv/torch/bin/python bench/frameworks/numpy_torch.py [--runs 5] [--steps 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, os, sys, time
import numpy as np
import torch, torchvision

def ticks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            text = open(f"/proc/self/task/{tid}/stat").read()
            comm = open(f"/proc/self/task/{tid}/comm").read().strip()
        except OSError:
            continue
        f = text[text.rindex(")") + 2:].split()
        out[tid] = (comm, int(f[11]) + int(f[12]))
    return out

steps = int(sys.argv[1])
torch.manual_seed(0)
model = torchvision.models.squeezenet1_0().eval()
x = torch.randn(4, 3, 160, 160)
a = np.random.default_rng(0).standard_normal((600, 600))
def step():
    with torch.no_grad():
        y = model(x)
    return float(y.double().sum()) + float((a @ a).sum())
step()
t0 = ticks()
times, sums = [], []
for _ in range(steps):
    t = time.perf_counter()
    sums.append(step())
    times.append(time.perf_counter() - t)
t1 = ticks()
busy = [t for t, (c, v) in t1.items() if c != "parwidth-mon" and t in t0 and v > t0[t][1]]
print(json.dumps({"step": sorted(times)[len(times) // 2],
                  "alive": len([t for t, (c, _) in t1.items() if c != "parwidth-mon"]),
                  "busy": len(busy), "sum": sums[-1],
                  "torch_threads": torch.get_num_threads()}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--lib", default=str(Path(os.environ.get("PW_BUILD", ROOT / "build"))
                                         / "lib" / "libparwidth.so"))
    a = ap.parse_args()
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("PARWIDTH_", "OMP_", "OPENBLAS_NUM")) and k != "LD_PRELOAD"}
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    res = {"bare": [], "parwidth": []}
    for _ in range(a.runs):
        for c in res:
            env = dict(base)
            if c == "parwidth":
                env.update(LD_PRELOAD=a.lib, PARWIDTH_NODE_DIR="/tmp/pw-bench-numpy-torch-node")
            p = subprocess.run([sys.executable, "-c", CHILD, str(a.steps)], env=env,
                               capture_output=True, text=True, timeout=1800)
            if p.returncode != 0:
                raise SystemExit(p.stderr[-2000:])
            res[c].append(json.loads(p.stdout))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    for c, rs in res.items():
        t = [r["step"] for r in rs]
        print(f"  {c:<9} step {statistics.median(t):.3f} s [{min(t):.3f}, {max(t):.3f}]"
              f"  threads busy/alive {sorted({(r['busy'], r['alive']) for r in rs})}"
              f"  torch threads {sorted({r['torch_threads'] for r in rs})}"
              f"  same result: {len({r['sum'] for r in res['bare'] + res['parwidth']}) == 1}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
