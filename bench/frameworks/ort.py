#!/usr/bin/env python3
"""bench/frameworks/ort: ONNX Runtime inference, defaults against parwidth.

examples/infer_ort.py on a fixture model with its weights filled (fixed
random values), side by side in one run, configurations alternating:
  single process   defaults (ORT: one intra-op thread per core, spinning)
                   parwidth (LD_PRELOAD: the plan from the session's graph)
  two processes    defaults (each takes every core)
  started together parwidth (no launcher: the node registry divides the cores,
                             and idle workers stop spinning)
                   half     (each set by hand to half the CPUs:
                             intra_op_num_threads = CPUs / 2)
A run's figure is the median step time of the process (for two processes, the
mean of the two medians); the table shows median, min and max over --runs runs
and each configuration's ratio to parwidth's median.

    .venv/ort/bin/python bench/frameworks/ort.py [--model googlenet] [--runs 5] [--steps 10]
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
SCRIPT = ROOT / "examples" / "infer_ort.py"
SINGLE = ["defaults", "parwidth"]
PAIR = ["defaults", "parwidth", "half"]


def env_clean():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PARWIDTH_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_NUM", "MKL_"))
            and k != "LD_PRELOAD"}


def launch(config, a, filled, out, i, node):
    args = [sys.executable, str(SCRIPT), "--model", str(a.model_path), "--filled", str(filled),
            "--steps", str(a.steps), "--batch", str(a.batch), "--json", str(out / f"v{i}.json")]
    env = env_clean()
    if config == "parwidth":
        env.update(LD_PRELOAD=str(a.lib), PARWIDTH_NODE_DIR=str(node),
                   PARWIDTH_REPORT=str(out / f"r{i}.json"))
    if config == "half":
        args += ["--intra", str(max(1, len(os.sched_getaffinity(0)) // 2))]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def one_run(config, n, a, filled, tmp):
    out = Path(tempfile.mkdtemp(dir=tmp))
    procs = [launch(config, a, filled, out, i, out / "node") for i in range(n)]
    for p in procs:
        _, err = p.communicate(timeout=1800)
        if p.returncode != 0:
            raise SystemExit(f"{config} failed:\n{err[-2000:]}")
    views = [json.loads((out / f"v{i}.json").read_text()) for i in range(n)]
    reports = [json.loads((out / f"r{i}.json").read_text()) for i in range(n)
               if (out / f"r{i}.json").exists()]
    t = statistics.mean(statistics.median(v["step_s"]) for v in views)
    return t, views, reports


def row(name, xs, ref):
    return (f"  {name:<9} {statistics.median(xs) * 1e3:8.1f} {min(xs) * 1e3:8.1f} "
            f"{max(xs) * 1e3:8.1f}   {statistics.median(xs) / statistics.median(ref):5.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="googlenet")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--lib", default=str(Path(os.environ.get("PW_BUILD", ROOT / "build"))
                                         / "lib" / "libparwidth.so"))
    a = ap.parse_args()
    a.model_path = ROOT / "tests" / "fixtures" / "models" / f"{a.model}.onnx"
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        filled = Path(tmp) / f"{a.model}.onnx"
        times = {("single", c): [] for c in SINGLE}
        times.update({("pair", c): [] for c in PAIR})
        seen = {}
        for _ in range(a.runs):
            for c in SINGLE:
                t, v, r = one_run(c, 1, a, filled, tmp)
                times[("single", c)].append(t)
                seen[("single", c)] = (v, r)
            for c in PAIR:
                t, v, r = one_run(c, 2, a, filled, tmp)
                times[("pair", c)].append(t)
                seen[("pair", c)] = (v, r)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"{a.model}, batch {a.batch}, {a.steps} steps, {a.runs} runs; "
          "ms per step: median min max, ratio to parwidth (median)")
    for kind, configs in (("single", SINGLE), ("pair", PAIR)):
        print("one process" if kind == "single" else "two processes at once")
        for c in configs:
            print(row(c, times[(kind, c)], times[(kind, "parwidth")]))
    for key, (views, reports) in seen.items():
        opts = [v["options"] for v in views]
        plans = [(r["plan"]["pools"], r["plan"]["threads"]) for r in reports]
        print(f"  {key[0]}/{key[1]}: ORT options {opts}" + (f", plans {plans}" if plans else ""))
    print(json.dumps({f"{k[0]}/{k[1]}": v for k, v in times.items()}))


if __name__ == "__main__":
    main()
