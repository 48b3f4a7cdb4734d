#!/usr/bin/env python3
"""bench/frameworks/pytorch: PyTorch inference under its defaults, under its own
launcher and under parwidth, side by side in one run.

Three configurations of examples/train_torch.py (inference, synthetic data):
  defaults   plain `python train_torch.py` (Debian's torch: hardware_concurrency/2
             intra-op threads)
  run_cpu    `python -m torch.backends.xeon.run_cpu train_torch.py`: PyTorch's own
             launcher (OMP_NUM_THREADS = physical cores, numactl -C/-m, no iomp or
             tcmalloc to preload here), the peer a user would pick
  parwidth   LD_PRELOAD=libparwidth.so (its own node registry directory, so that
             governed processes of other sessions cannot take a share)
Runs alternate between configurations so that drift on the machine hits all
alike. Each run's figure is its median step time (first step excluded); the
table shows the median, min and max of those over --runs runs, and the
ratios of medians and of minimums (> 1: the second is faster).

    .venv/torch/bin/python bench/frameworks/pytorch.py [--runs 5] [--batch 16] [--steps 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "train_torch.py"
CONFIGS = ["defaults", "run_cpu", "parwidth"]


def env_clean():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PARWIDTH_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_NUM", "MKL_"))
            and k != "LD_PRELOAD"}


def one_run(config, model, a, tmp):
    out = Path(tmp) / f"{config}-{model}.json"
    args = [str(SCRIPT), "--model", model, "--batch", str(a.batch), "--steps", str(a.steps),
            "--warmup", "1", "--mode", "infer", "--json", str(out)]
    env = env_clean()
    if config == "defaults":
        cmd = [sys.executable] + args
    elif config == "run_cpu":
        logs = tempfile.mkdtemp(dir=tmp)
        cmd = [sys.executable, "-m", "torch.backends.xeon.run_cpu", "--log_path", logs] + args
    else:
        cmd = [sys.executable] + args
        env.update(LD_PRELOAD=str(a.lib), PARWIDTH_NODE_DIR=str(Path(tmp) / "node"),
                   PARWIDTH_REPORT=str(Path(tmp) / "report.json"))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"{config} {model} failed:\n{p.stderr[-2000:]}")
    return json.loads(out.read_text())


def stats(xs):
    return statistics.median(xs), min(xs), max(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--models", default="resnet50,googlenet,squeezenet")
    ap.add_argument("--lib", default=str(ROOT / os.environ.get("PW_BUILD", "build") / "lib" /
                                          "libparwidth.so"))
    a = ap.parse_args()
    if not Path(a.lib).exists():
        raise SystemExit(f"{a.lib} not found: build first")
    models = a.models.split(",")
    print(f"PyTorch inference, batch {a.batch}, {a.steps} timed steps per run (1 warm-up), "
          f"{a.runs} runs per configuration, alternating; seconds per step")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            times = {c: [] for c in CONFIGS}
            threads = {}
            for _ in range(a.runs):
                for c in CONFIGS:
                    v = one_run(c, model, a, tmp)
                    times[c].append(v["median_s"])
                    threads[c] = (v["num_threads"], v["openblas_threads"])
            rows.append((model, times, threads))
            print(f"  {model}: done", file=sys.stderr, flush=True)
    head = f"{'model':<11} {'config':<9} {'threads':>7} {'median':>8} {'min':>8} {'max':>8}"
    print(head)
    for model, times, threads in rows:
        for c in CONFIGS:
            m, lo, hi = stats(times[c])
            print(f"{model:<11} {c:<9} {threads[c][0]:>7} {m:>8.3f} {lo:>8.3f} {hi:>8.3f}")
    print()
    print(f"{'model':<11} {'defaults/parwidth':>18} {'run_cpu/parwidth':>17} "
          f"{'defaults/run_cpu':>17}   (median ratio, min ratio)")
    for model, times, _ in rows:
        med = {c: statistics.median(times[c]) for c in CONFIGS}
        mn = {c: min(times[c]) for c in CONFIGS}
        def r(x, y):
            return f"{med[x] / med[y]:.2f}x, {mn[x] / mn[y]:.2f}x"
        print(f"{model:<11} {r('defaults', 'parwidth'):>18} {r('run_cpu', 'parwidth'):>17} "
              f"{r('defaults', 'run_cpu'):>17}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
