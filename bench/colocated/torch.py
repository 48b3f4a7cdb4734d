#!/usr/bin/env python3
"""bench/colocated/torch: two PyTorch inference processes on one node.

Four ways to run two co-located instances of examples/train_torch.py
(inference, synthetic data), side by side in one run:
  defaults   two plain processes (Debian's torch: hardware_concurrency/2
             intra-op threads each)
  naive      two processes that each ask for every CPU (torch.set_num_threads)
  run_cpu    PyTorch's own launcher, `python -m torch.backends.xeon.run_cpu
             --ninstances 2`: each instance pinned to its own cores with
             OMP_NUM_THREADS = its cores
  parwidth   two plain processes under LD_PRELOAD=libparwidth.so, started
             together: no launcher, the node registry divides the cores
Configurations alternate run by run. A run's figure is the mean over the two
instances of each one's median step time (first step excluded); the table
shows median, min and max of that over --runs runs, and ratios to parwidth.

    .venv/torch/bin/python bench/colocated/torch.py [--runs 5] [--batch 16] [--steps 3]
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
CONFIGS = ["defaults", "naive", "run_cpu", "parwidth"]


def env_clean():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PARWIDTH_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_NUM", "MKL_"))
            and k != "LD_PRELOAD"}


def one_run(config, model, a, tmp):
    out = Path(tempfile.mkdtemp(dir=tmp))
    args = [str(SCRIPT), "--model", model, "--batch", str(a.batch), "--steps", str(a.steps),
            "--warmup", "1", "--mode", "infer", "--json", str(out / "view-%p.json")]
    env = env_clean()
    procs = []
    if config == "run_cpu":
        cmd = [sys.executable, "-m", "torch.backends.xeon.run_cpu", "--ninstances", "2",
               "--log_path", str(out / "logs")] + args
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    else:
        extra = ["--threads", str(len(os.sched_getaffinity(0)))] if config == "naive" else []
        if config == "parwidth":
            env.update(LD_PRELOAD=str(a.lib), PARWIDTH_NODE_DIR=str(out / "node"),
                       PARWIDTH_REPORT=str(out / "report-%p.json"))
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable] + args + extra, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
    for p in procs:
        _, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"{config} {model} failed:\n{err[-2000:]}")
    views = [json.loads(f.read_text()) for f in sorted(out.glob("view-*.json"))]
    if len(views) != 2:
        raise SystemExit(f"{config} {model}: expected 2 instances, got {len(views)}")
    return views


def row(name, xs, ref):
    return (f"  {name:<9} {statistics.median(xs):7.3f} {min(xs):7.3f} {max(xs):7.3f}"
            f"   {statistics.median(xs) / statistics.median(ref):5.2f}x"
            f" (min {min(xs) / min(ref):4.2f}x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--models", default="resnet50,squeezenet")
    ap.add_argument("--lib", default=str(ROOT / os.environ.get("PW_BUILD", "build") /
                                         "lib" / "libparwidth.so"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"two co-located instances, batch {a.batch}, {a.steps} timed steps, {a.runs} runs; "
              f"{len(os.sched_getaffinity(0))} CPUs")
        print("seconds per batch (mean of the two instances' medians); ratio = config / parwidth"
              " (> 1: parwidth is faster)")
        for model in a.models.split(","):
            times = {c: [] for c in CONFIGS}
            threads = {}
            for i in range(a.runs):
                for c in CONFIGS:
                    views = one_run(c, model, a, tmp)
                    times[c].append(statistics.mean(v["median_s"] for v in views))
                    threads[c] = [v["num_threads"] for v in views]
                print(f"  {model}: run {i + 1}/{a.runs}", file=sys.stderr)
            print(f"{model}:            median     min     max   vs parwidth")
            for c in CONFIGS:
                print(row(c, times[c], times["parwidth"]) + f"   threads {threads[c]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
