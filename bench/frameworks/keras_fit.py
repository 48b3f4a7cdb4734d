#!/usr/bin/env python3
"""bench/frameworks/keras_fit: a Keras fit's second run planned from the costs of its
remembered train step, against the width rule's plan, side by side in one run.

tests/programs/keras_fit.py (four parallel Dense branches, model.fit) under parwidth.
A first run, not timed, reads the train step's function graph and remembers it in a
fresh cache; every later run starts from that memory (a second, not timed either, reads
the plan and graph statistics it gives). Configurations alternate, so that
drift on the machine hits them alike:
  costs   the plan parwidth makes from the remembered step (source "model" with an empty
          cache's built-in machine model, or "measured")
  width   the width rule's plan for the same graph (pools = min(W, max level width,
          cores), intra = cores / pools, cores here os.cpu_count()), forced with
          PARWIDTH_POOLS / PARWIDTH_INTRA
  bare    no parwidth (TensorFlow's defaults), for scale
Each run's figure is its median step time (the first 3 steps, tracing included, left
out); the table shows min, median and max over --runs runs and each one's ratio to
costs (> 1: the costs plan is faster).

    .venv/tf/bin/python bench/frameworks/keras_fit.py [--runs 5] [--steps 60] [--batch 32]
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
PROGRAM = ROOT / "tests" / "programs" / "keras_fit.py"
SKIP = 3


def one_run(lib, args, tmp, tag, extra):
    out = Path(tmp) / f"{tag}.json"
    report = Path(tmp) / f"{tag}.report.json"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PARWIDTH_", "TF_NUM_", "OMP_")) and k != "LD_PRELOAD"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", XDG_CACHE_HOME=str(Path(tmp) / "cache"))
    if extra is not None:
        env.update(LD_PRELOAD=str(lib), PARWIDTH_REPORT=str(report), PARWIDTH_NODE="off", **extra)
    cmd = [sys.executable, str(PROGRAM), "--steps", str(args.steps), "--batch", str(args.batch),
           "--json", str(out)]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=600)
    steps = json.loads(out.read_text())["step_seconds"][SKIP:]
    plan = None
    if extra is not None:
        r = json.loads(report.read_text())
        plan = (r["plan"]["pools"], r["plan"]["threads"], r["plan"]["source"], r["graph"])
    return statistics.median(steps), plan


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    build = Path(os.environ.get("PW_BUILD", ROOT / "build"))
    lib = (build if build.is_absolute() else ROOT / build) / "lib" / "libparwidth.so"
    if not lib.exists():
        sys.exit(f"{lib} not found: build first or set PW_BUILD")
    with tempfile.TemporaryDirectory() as tmp:
        one_run(lib, args, tmp, "first", {})  # remembers the train step
        _, plan = one_run(lib, args, tmp, "probe", {})
        pools, threads, source, graph = plan
        if graph is None or graph.get("costs") != "flops":
            sys.exit(f"bench/frameworks/keras_fit: the second run was not costed: {graph}")
        cores = os.cpu_count() or 1
        wp = max(1, min(graph["avg_width"], graph["max_level_width"], cores))
        width = {"PARWIDTH_POOLS": str(wp), "PARWIDTH_INTRA": str(max(1, cores // wp))}
        configs = {"costs": {}, "width": width, "bare": None}
        times = {name: [] for name in configs}
        plans = {}
        for i in range(args.runs):
            for name, extra in configs.items():
                t, p = one_run(lib, args, tmp, f"{name}{i}", extra)
                times[name].append(t)
                if p:
                    plans[name] = f"{p[0]} x {p[1]} ({p[2]})"
    base = statistics.median(times["costs"])
    print(f"Keras fit, second run: {args.steps} steps of batch {args.batch}, median step time per run "
          f"(first {SKIP} left out), {args.runs} runs each, alternating; {cores} cores")
    print(f"{'config':8} {'plan':22} {'min ms':>8} {'median ms':>10} {'max ms':>8} {'median / costs':>15}")
    for name, ts in times.items():
        print(f"{name:8} {plans.get(name, 'TF defaults'):22} {1e3 * min(ts):8.3f} "
              f"{1e3 * statistics.median(ts):10.3f} {1e3 * max(ts):8.3f} "
              f"{statistics.median(ts) / base:15.3f}")


if __name__ == "__main__":
    main()
