#!/usr/bin/env python3
"""bench/frameworks/tf: TensorFlow's defaults against parwidth, side by side in one run.

examples/train_tf.py's two models (the Inception-style CNN and the wide-and-deep
model with embedding lookups, training steps on synthetic data) in graph mode
(Session) and eager mode (tf.function). Runs alternate between
the two configurations so that drift on the machine hits both alike. Each run's
figure is its median step time (first step excluded); the table shows the
median, min and max of those over --runs runs, and the ratio defaults/parwidth
(> 1: parwidth is faster).

    .venv/tf/bin/python bench/frameworks/tf.py [--runs 5] [--steps 30] [--batch 32]
        [--models inception,widedeep] [--modes graph,eager]
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


def python_for_tf():
    try:
        import importlib.util
        if importlib.util.find_spec("tensorflow") is not None:
            return sys.executable
    except ImportError:
        pass
    return str(ROOT / ".venv" / "tf" / "bin" / "python")


def one_run(py, lib, model, mode, args, governed, tmp):
    out = Path(tmp) / "out.json"
    report = Path(tmp) / "report.json"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PARWIDTH_", "TF_NUM_", "OMP_")) and k != "LD_PRELOAD"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if governed:
        env["LD_PRELOAD"] = str(lib)
        env["PARWIDTH_REPORT"] = str(report)
        # One process at a time here: it owns the whole budget, whatever other
        # governed processes on the machine do (the node registry would share it).
        env["PARWIDTH_NODE"] = "off"
    cmd = [py, str(ROOT / "examples" / "train_tf.py"), "--model", model, "--steps", str(args.steps),
           "--batch", str(args.batch), "--json", str(out)] + (["--eager"] if mode == "eager" else [])
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=600)
    with open(out) as f:
        result = json.load(f)
    plan = None
    if governed:
        with open(report) as f:
            r = json.load(f)
        plan = f"{r['plan']['pools']}x{r['plan']['threads']}"
    return result["median_step_s"], plan


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--modes", default="graph,eager")
    ap.add_argument("--models", default="inception,widedeep")
    args = ap.parse_args()
    build = Path(os.environ.get("PW_BUILD", ROOT / "build"))
    lib = (build if build.is_absolute() else ROOT / build) / "lib" / "libparwidth.so"
    if not lib.exists():
        sys.exit(f"{lib} not found: build first or set PW_BUILD")
    py = python_for_tf()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            for mode in args.modes.split(","):
                times = {False: [], True: []}
                plans = set()
                for i in range(args.runs):
                    # Alternate which configuration goes first.
                    for governed in ((False, True) if i % 2 == 0 else (True, False)):
                        t, plan = one_run(py, lib, model, mode, args, governed, tmp)
                        times[governed].append(t)
                        if plan:
                            plans.add(plan)
                rows.append((f"{model} {mode}", times[False], times[True],
                             ",".join(sorted(plans))))

    print(f"TensorFlow: examples/train_tf.py ({args.models}), training, batch {args.batch}, "
          f"{args.steps} steps, {args.runs} runs each, interleaved")
    print("step time in ms: median [min, max] over runs of each run's median step")
    hdr = f"{'model':<26}{'defaults':>24}{'parwidth':>24}  {'plan':<6}{'ratio med':>10}{'ratio min':>10}"
    print(hdr)
    print("-" * len(hdr))

    def cell(ts):
        return (f"{statistics.median(ts) * 1e3:.2f} [{min(ts) * 1e3:.2f}, "
                f"{max(ts) * 1e3:.2f}]")

    for name, base, gov, plan in rows:
        print(f"{name:<26}{cell(base):>24}{cell(gov):>24}  {plan:<6}"
              f"{statistics.median(base) / statistics.median(gov):>10.2f}"
              f"{min(base) / min(gov):>10.2f}")
    print("ratio = defaults / parwidth (> 1: parwidth faster); plan = pools x intra-op threads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
