#!/usr/bin/env python3
"""A torchvision model on synthetic data, for running with and without parwidth.

Prints the median step time, torch's own view of its threads and a checksum of
the outputs, so that runs can be compared:

    .venv/torch/bin/python examples/train_torch.py --model squeezenet --steps 3
    LD_PRELOAD=build/lib/libparwidth.so .venv/torch/bin/python examples/train_torch.py ...

--json FILE writes torch's view, the process's threads with their affinity
(read from /proc/self/task while they are alive) and the checksums.
--loader N adds a DataLoader with N forked workers feeding the steps.
--fork runs a TorchScript fork/wait step first (the inter-op pool).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torchvision


def tasks():
    """Every thread of this process: tid, name, allowed CPUs."""
    out = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except OSError:  # the thread ended meanwhile
            continue
        out.append({"tid": int(tid), "comm": status.get("Name", ""),
                    "cpus": status.get("Cpus_allowed_list", "").strip()})
    return out


def openblas_threads():
    """OpenBLAS's own pool size, as OpenBLAS reports it (None if not loaded)."""
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    return int(lib.openblas_get_num_threads())


class Synthetic(torch.utils.data.Dataset):
    """Images and labels from a fixed seed per index (same data in any worker)."""

    def __init__(self, n, shape, classes, seed):
        self.n, self.shape, self.classes, self.seed = n, shape, classes, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 100003 + i)
        return torch.randn(self.shape, generator=g), int(torch.randint(self.classes, (1,), generator=g))


@torch.jit.script
def _half(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5


@torch.jit.script
def forked_sum(x: torch.Tensor) -> torch.Tensor:
    futs = [torch.jit.fork(_half, x + float(i)) for i in range(4)]
    total = torch.zeros_like(x)
    for f in futs:
        total = total + torch.jit.wait(f)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="squeezenet",
                    choices=["resnet18", "resnet50", "squeezenet", "googlenet"])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=224, help="image side")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    ap.add_argument("--mode", default="infer", choices=["infer", "train"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, help="call torch.set_num_threads(N) first")
    ap.add_argument("--interop", type=int, help="call torch.set_num_interop_threads(N) first")
    ap.add_argument("--loader", type=int, default=0, help="DataLoader workers (forked)")
    ap.add_argument("--fork", action="store_true", help="a TorchScript fork/wait step first")
    ap.add_argument("--json", help="write torch's view, threads and checksums here "
                    "(%%p = pid: several instances started by one launcher)")
    a = ap.parse_args()

    if a.threads:
        torch.set_num_threads(a.threads)
    if a.interop:
        torch.set_num_interop_threads(a.interop)
    torch.manual_seed(a.seed)
    kw = {"weights": None}
    if a.model == "googlenet":
        kw.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, {"squeezenet": "squeezenet1_0"}.get(a.model, a.model))(**kw)
    model.train(a.mode == "train")
    classes = 1000
    opt = torch.optim.SGD(model.parameters(), lr=0.01) if a.mode == "train" else None
    shape = (3, a.size, a.size)

    fork_check = None
    if a.fork:
        fork_check = float(forked_sum(torch.arange(8, dtype=torch.float32)).sum())

    if a.loader:
        data = Synthetic(a.batch * (a.steps + a.warmup), shape, classes, a.seed)
        batches = iter(torch.utils.data.DataLoader(data, batch_size=a.batch, num_workers=a.loader,
                                                   multiprocessing_context="fork"))
    else:
        g = torch.Generator().manual_seed(a.seed)
        fixed = [(torch.randn((a.batch,) + shape, generator=g),
                  torch.randint(classes, (a.batch,), generator=g))
                 for _ in range(a.steps + a.warmup)]
        batches = iter(fixed)

    times, sums, losses = [], [], []
    for step in range(a.warmup + a.steps):
        x, y = next(batches)
        t0 = time.perf_counter()
        if opt is not None:
            opt.zero_grad()
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            losses.append(float(loss))
        else:
            with torch.no_grad():
                out = model(x)
        dt = time.perf_counter() - t0
        if step >= a.warmup:
            times.append(dt)
        # float64 sum of the outputs: a checksum that tolerates summation order.
        sums.append(float(out.double().sum()))
    threads_alive = tasks()  # the model's pools are alive now

    view = {
        "model": a.model, "mode": a.mode, "batch": a.batch, "steps": a.steps, "seed": a.seed,
        "num_threads": torch.get_num_threads(),
        "num_interop_threads": torch.get_num_interop_threads(),
        "openblas_threads": openblas_threads(),
        "step_s": times,
        "median_s": statistics.median(times),
        "checksums": sums,
        "losses": losses,
        "argmax": [int(i) for i in out.argmax(dim=1)],
        "fork_check": fork_check,
        "loader_workers": a.loader,
        "pid": os.getpid(),
        "tasks": threads_alive,
    }
    print(f"model {a.model} {a.mode} batch {a.batch}: median step {view['median_s']:.3f} s "
          f"(min {min(times):.3f}, max {max(times):.3f}) over {a.steps} steps")
    print(f"torch threads: intra-op {view['num_threads']}, inter-op {view['num_interop_threads']}"
          f", OpenBLAS {view['openblas_threads']}; process threads {len(threads_alive)}")
    print(f"checksum {sums[-1]:.6e}" + (f" loss {losses[-1]:.6f}" if losses else ""))
    if a.json:
        with open(a.json.replace("%p", str(os.getpid())), "w") as f:
            json.dump(view, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
