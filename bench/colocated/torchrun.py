#!/usr/bin/env python3
"""bench/colocated/torchrun: a DDP job of 2 torchrun workers on this machine.

Three ways, side by side in one run, configurations interleaved run by run:
  defaults   `torchrun --nproc_per_node 2 ddp/worker.py` (torchrun sets
             OMP_NUM_THREADS=1 per worker; nothing pinned)
  run_cpu    each worker started through PyTorch's own placement,
             `python -m torch.backends.xeon.run_cpu --ninstances 2 --rank
             $LOCAL_RANK ddp/worker.py`: the rank's half of the cores with
             numactl -C, OMP_NUM_THREADS = its cores
  parwidth   the defaults under LD_PRELOAD=libparwidth.so: the launcher's
             local rank and size divide the node, every thread of a worker
             inside its half
A run's figure is the slower worker's median step time (the job waits for
it at every all-reduce); the table shows median, min and max over --runs
runs, and each median's ratio to parwidth's.

    .venv/torch/bin/python bench/colocated/torchrun.py [--runs 5] [--steps 5]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Not next to this file: its directory holds torch.py, which `import torch` would find first.
WORKER = Path(__file__).resolve().parent / "ddp" / "worker.py"
CONFIGS = ["defaults", "run_cpu", "parwidth"]


def env_clean():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PARWIDTH_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_NUM", "MKL_"))
            and k != "LD_PRELOAD"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(config, a, tmp):
    out = Path(tempfile.mkdtemp(dir=tmp))
    env = env_clean()
    env["GLOO_SOCKET_IFNAME"] = "lo"
    worker = [str(WORKER), str(out), "--model", a.model, "--batch", str(a.batch),
              "--size", str(a.size), "--steps", str(a.steps)]
    # Debian's torch 1.13 on Python 3.11: the agent's defaults --redirects/--tee "0" crash it.
    run = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
           "--master_addr=127.0.0.1", f"--master_port={free_port()}", "--redirects=1", "--tee=1",
           f"--log_dir={out}/logs"]
    if config == "run_cpu":
        cmd = run + ["--no_python", "sh", "-c",
                     f'exec {sys.executable} -m torch.backends.xeon.run_cpu --ninstances 2 '
                     f'--rank "$LOCAL_RANK" --log_path {out}/run_cpu-"$LOCAL_RANK" "$@"', "sh"]
        cmd += worker
    else:
        cmd = run + worker
    if config == "parwidth":
        env.update(LD_PRELOAD=str(a.lib), PARWIDTH_NODE_DIR=str(out / "node"),
                   PARWIDTH_REPORT=str(out / "report-%p.json"))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"{config} failed:\n{p.stderr[-3000:]}")
    ranks = [json.loads((out / f"rank-{r}.json").read_text()) for r in range(2)]
    return ranks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--size", type=int, default=112)
    ap.add_argument("--model", default="squeezenet1_1")
    ap.add_argument("--lib", default=str(ROOT / os.environ.get("PW_BUILD", "build") /
                                         "lib" / "libparwidth.so"))
    a = ap.parse_args()
    print(f"torchrun, 2 workers, DDP {a.model} batch {a.batch} at {a.size}px, {a.steps} timed "
          f"steps, {a.runs} runs; {len(os.sched_getaffinity(0))} CPUs; "
          f"load average before {os.getloadavg()[0]:.2f}")
    times = {c: [] for c in CONFIGS}
    seen = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            for c in CONFIGS:
                ranks = one_run(c, a, tmp)
                times[c].append(max(r["median_s"] for r in ranks))
                seen[c] = [(r["num_threads"], r["affinity"]) for r in ranks]
            print(f"  run {i + 1}/{a.runs}", file=sys.stderr)
    print("seconds per step (the slower worker's median); ratio = config / parwidth "
          "(> 1: parwidth is faster)")
    print(f"  {'config':<9} {'median':>7} {'min':>7} {'max':>7}   vs parwidth   "
          "threads, affinity per worker")
    ref = statistics.median(times["parwidth"])
    for c in CONFIGS:
        xs = times[c]
        print(f"  {c:<9} {statistics.median(xs):7.3f} {min(xs):7.3f} {max(xs):7.3f}"
              f"   {statistics.median(xs) / ref:5.2f}x        {seen[c]}")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
